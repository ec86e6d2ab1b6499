package mlb_test

import (
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/krafla/krafla/mlb"
	"github.com/krafla/krafla/mlb/mlbtest"
)

func TestWriteOpenCases(t *testing.T) {
	dir := t.TempDir()
	for _, c := range mlbtest.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			path := mlbtest.Write(t, dir, c.Header, 1)
			f, err := mlb.Open(path)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer f.Close()
			if !reflect.DeepEqual(f.Header, c.Header) {
				t.Errorf("header round trip:\ngot  %+v\nwant %+v", f.Header, c.Header)
			}
			ts, err := mlb.Tensors(&c.Header)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := len(f.Tensors), len(ts); got != want {
				t.Fatalf("got %d tensors, want %d", got, want)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := f.Size, st.Size(); got != want {
				t.Errorf("Size: got %d, want %d", got, want)
			}
			for _, ti := range ts {
				tt := f.Tensor(ti.Name)
				if tt == nil {
					t.Fatalf("tensor %s missing", ti.Name)
				}
				n := ti.Rows * ti.Cols
				switch ti.Type {
				case mlb.F32:
					if len(tt.F32) != n {
						t.Errorf("%s: got %d values, want %d", ti.Name, len(tt.F32), n)
					}
				case mlb.Q8_0, mlb.Q4_0:
					if len(tt.D) != n/32 {
						t.Errorf("%s: got %d scales, want %d", ti.Name, len(tt.D), n/32)
					}
					for _, d := range tt.D {
						if !(d > 0) {
							t.Fatalf("%s: scale %v not positive", ti.Name, d)
						}
					}
				}
			}
		})
	}
}

func TestOpenMissing(t *testing.T) {
	_, err := mlb.Open(t.TempDir() + "/nope.mlb")
	if !errors.Is(err, mlb.ErrIO) {
		t.Fatalf("got %v, want ML_E_IO", err)
	}
}
