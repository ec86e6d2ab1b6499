// Package gguftest writes split GGUF sets for tests, as llama.cpp's
// gguf-split --split-max-tensors does (tools/gguf-split/gguf-split.cpp): the
// first file holds the source's metadata followed by split.no, split.count
// and split.tensors.count; every other file holds only those three keys; the
// tensors are dealt out in source order.
package gguftest

import (
	"fmt"

	"github.com/krafla/krafla/gguf"
)

// Split writes the GGUF file src as n files PREFIX-0000i-of-0000n.gguf and
// returns their paths. The tensors go out in order, as evenly as they
// divide (each file gets at least one while there are enough). edit, if not
// nil, may change split i's metadata (from 0) before it is written, to plant
// a fault.
func Split(src, prefix string, n int, edit func(i int, kvs []gguf.KV) []gguf.KV) ([]string, error) {
	f, err := gguf.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if n < 1 || n > len(f.Tensors) {
		return nil, fmt.Errorf("gguftest: %d splits of %d tensors", n, len(f.Tensors))
	}
	var paths []string
	next := 0
	for i := range n {
		end := next + (len(f.Tensors)-next)/(n-i)
		var kvs []gguf.KV
		if i == 0 {
			for _, kv := range f.KVs {
				if kv.Key != gguf.KeySplitNo && kv.Key != gguf.KeySplitCount && kv.Key != gguf.KeySplitTensors {
					kvs = append(kvs, gguf.KV{Key: kv.Key, Value: kv.Value})
				}
			}
		}
		kvs = append(kvs,
			gguf.KV{Key: gguf.KeySplitNo, Value: gguf.Uint16(uint16(i))},
			gguf.KV{Key: gguf.KeySplitCount, Value: gguf.Uint16(uint16(n))},
			gguf.KV{Key: gguf.KeySplitTensors, Value: gguf.Int32(int32(len(f.Tensors)))})
		if edit != nil {
			kvs = edit(i, kvs)
		}
		var infos []gguf.TensorInfo
		for _, t := range f.Tensors[next:end] {
			infos = append(infos, gguf.TensorInfo{Name: t.Name, Type: t.Type, Shape: t.Shape})
		}
		p := gguf.SplitPath(prefix, i+1, n)
		w, err := gguf.Create(p, kvs, infos)
		if err != nil {
			return nil, err
		}
		for _, t := range f.Tensors[next:end] {
			if err := w.WriteTensor(t.Name, t.Data); err != nil {
				w.Abort()
				return nil, err
			}
		}
		if err := w.Close(); err != nil {
			return nil, err
		}
		paths = append(paths, p)
		next = end
	}
	return paths, nil
}
