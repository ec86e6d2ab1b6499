package gguf

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
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
		// Write back and re-read: the same metadata and tensors. The writer
		// refuses arrays of arrays (llama.cpp does), which Parse reads; and
		// it pads the header to general.alignment, which may be 2^31 bytes.
		if g.Alignment > 1<<16 {
			return
		}
		for _, kv := range g.KVs {
			if kv.Value.Type == TypeArray && kv.Value.Elem == TypeArray {
				return
			}
		}
		// In memory: the Writer's header and WriteTensor, without Close's
		// sync and rename (a file per input would make the seed run take 30 s).
		infos := make([]TensorInfo, len(g.Tensors))
		for i := range g.Tensors {
			infos[i] = g.Tensors[i].TensorInfo
		}
		var buf bytes.Buffer
		w := &Writer{path: "fuzz.gguf", align: DefaultAlignment, bw: bufio.NewWriter(&buf)}
		hdr, err := w.header(g.KVs, infos)
		if err != nil {
			t.Fatalf("an accepted file does not write back: %v", err)
		}
		w.bw.Write(hdr)
		for _, tt := range g.Tensors {
			if err := w.WriteTensor(tt.Name, tt.Data); err != nil {
				t.Fatalf("write back tensor %s: %v", tt.Name, err)
			}
		}
		if err := w.bw.Flush(); err != nil {
			t.Fatal(err)
		}
		rb := buf.Bytes()
		g2, err := Parse(rb)
		if err != nil {
			t.Fatalf("the written file does not parse: %v", err)
		}
		if len(g2.KVs) != len(g.KVs) || len(g2.Tensors) != len(g.Tensors) {
			t.Fatalf("re-read: %d keys, %d tensors; want %d, %d", len(g2.KVs), len(g2.Tensors), len(g.KVs), len(g.Tensors))
		}
		for i, kv := range g.KVs {
			k2 := g2.KVs[i]
			if k2.Key != kv.Key || k2.Value.Type != kv.Value.Type || k2.Value.Elem != kv.Value.Elem ||
				fmt.Sprintf("%v", k2.Value.Interface()) != fmt.Sprintf("%v", kv.Value.Interface()) {
				t.Fatalf("key %d re-read as %q = %v, want %q = %v", i, k2.Key, k2.Value, kv.Key, kv.Value)
			}
		}
		for i, tt := range g.Tensors {
			t2 := g2.Tensors[i]
			if t2.Name != tt.Name || t2.Type != tt.Type || !slices.Equal(t2.Shape, tt.Shape) || !bytes.Equal(t2.Data, tt.Data) {
				t.Fatalf("tensor %d re-read as %s %v %v, want %s %v %v", i, t2.Name, t2.Type, t2.Shape, tt.Name, tt.Type, tt.Shape)
			}
		}
	})
}
