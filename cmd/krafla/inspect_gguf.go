package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/krafla/krafla/gguf"
)

func init() { inspectors[gguf.Magic], extensionMagic[".gguf"] = inspectGGUF, gguf.Magic }

// ggufKV is one metadata entry as inspect reports it; arrays longer than
// ggufArrayShown are summarised by their length and first elements.
type ggufKV struct {
	Key   string `json:"key"`
	Type  string `json:"type"` // "u32", "string", "array[string]"
	Len   int    `json:"len,omitempty"`
	Value any    `json:"value"`
	Cut   bool   `json:"summarised,omitempty"` // Value holds only the first elements
}

type ggufTensor struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Shape  []uint64 `json:"shape"` // ggml order: the contiguous dimension first
	Offset int64    `json:"offset"`
	Bytes  uint64   `json:"bytes"`
}

type ggufTypeTotal struct {
	Type       string `json:"type"`
	Tensors    int    `json:"tensors"`
	Parameters uint64 `json:"parameters"`
	Bytes      uint64 `json:"bytes"`
}

type ggufReport struct {
	Path       string          `json:"path"`
	Kind       string          `json:"kind"` // "gguf"
	Version    uint32          `json:"version"`
	Alignment  uint64          `json:"alignment"`
	DataOffset int64           `json:"data_offset"`
	Size       int64           `json:"size"`
	Metadata   []ggufKV        `json:"metadata"`
	Tensors    []ggufTensor    `json:"tensors,omitempty"` // with --tensors
	ByType     []ggufTypeTotal `json:"by_type"`
	Totals     struct {
		Tensors       int     `json:"tensors"`
		Parameters    uint64  `json:"parameters"`
		DataBytes     uint64  `json:"data_bytes"`
		BitsPerWeight float64 `json:"bits_per_weight"`
	} `json:"totals"`
}

const ggufArrayShown = 8

// inspectGGUF validates a GGUF file and prints its metadata, tensor types and
// totals (and with --tensors every tensor).
func inspectGGUF(path string, opt inspectOptions, out io.Writer) error {
	f, err := gguf.Open(path)
	if err != nil {
		var e *gguf.Error
		if errors.As(err, &e) {
			return fmt.Errorf("%s: %w", e.Code(), err)
		}
		return fmt.Errorf("ML_E_IO: %w", err)
	}
	defer f.Close()
	r := ggufReport{Path: path, Kind: "gguf", Version: f.Version, Alignment: f.Alignment,
		DataOffset: f.DataOffset, Size: f.Size, Metadata: []ggufKV{}}
	for _, kv := range f.KVs {
		r.Metadata = append(r.Metadata, ggufSummarise(kv, opt.Tensors))
	}
	by := map[gguf.Type]*ggufTypeTotal{}
	for _, t := range f.Tensors {
		if opt.Tensors {
			r.Tensors = append(r.Tensors, ggufTensor{Name: t.Name, Type: t.Type.String(), Shape: t.Shape,
				Offset: f.DataOffset + int64(t.Offset), Bytes: t.Size})
		}
		bt := by[t.Type]
		if bt == nil {
			bt = &ggufTypeTotal{Type: t.Type.String()}
			by[t.Type] = bt
		}
		bt.Tensors++
		bt.Parameters += t.Elems()
		bt.Bytes += t.Size
		r.Totals.Tensors++
		r.Totals.Parameters += t.Elems()
		r.Totals.DataBytes += t.Size
	}
	for _, bt := range by {
		r.ByType = append(r.ByType, *bt)
	}
	sort.Slice(r.ByType, func(i, j int) bool { return r.ByType[i].Bytes > r.ByType[j].Bytes })
	if r.Totals.Parameters > 0 {
		r.Totals.BitsPerWeight = float64(r.Totals.DataBytes) * 8 / float64(r.Totals.Parameters)
	}
	if opt.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}

	arch, _ := f.String("general.architecture")
	if arch == "" {
		arch = "no general.architecture"
	}
	fmt.Fprintf(out, "%s: valid GGUF file (version %d), %s, %d tensors, %d parameters\n",
		path, r.Version, arch, r.Totals.Tensors, r.Totals.Parameters)
	if n, _ := f.Uint(gguf.KeySplitCount); n > 1 {
		no, _ := f.Uint(gguf.KeySplitNo)
		fmt.Fprintf(out, "split %d of %d of a set (llama.cpp's gguf-split): this file's tensors only; krafla convert reads the whole set from the first file\n", no+1, n)
	}
	var rows [][]string
	for _, kv := range r.Metadata {
		rows = append(rows, []string{kv.Key, kv.Type, ggufCell(kv)})
	}
	if err := mlbTable(out, "Metadata", []string{"key", "type", "value"}, rows); err != nil {
		return err
	}
	if opt.Tensors {
		rows = rows[:0]
		for _, t := range r.Tensors {
			rows = append(rows, []string{t.Name, t.Type, ggufShape(t.Shape), fmt.Sprintf("%#x", t.Offset), strconv.FormatUint(t.Bytes, 10)})
		}
		if err := mlbTable(out, "Tensors", []string{"name", "type", "shape", "offset", "bytes"}, rows); err != nil {
			return err
		}
	}
	rows = rows[:0]
	for _, bt := range r.ByType {
		rows = append(rows, []string{bt.Type, strconv.Itoa(bt.Tensors), strconv.FormatUint(bt.Parameters, 10), mlbBytes(int64(bt.Bytes))})
	}
	if err := mlbTable(out, "Tensor types", []string{"type", "tensors", "parameters", "bytes"}, rows); err != nil {
		return err
	}
	return mlbTable(out, "Totals", []string{"what", "value"}, [][]string{
		{"tensors", strconv.Itoa(r.Totals.Tensors)},
		{"parameters", strconv.FormatUint(r.Totals.Parameters, 10)},
		{"tensor data", mlbBytes(int64(r.Totals.DataBytes))},
		{"bits per weight", fmt.Sprintf("%.2f", r.Totals.BitsPerWeight)},
		{"data section at", fmt.Sprintf("%#x (alignment %d)", r.DataOffset, r.Alignment)},
		{"file size", mlbBytes(r.Size)},
	})
}

// ggufSummarise turns an entry into its report form; arrays longer than
// ggufArrayShown (tokens, merges, scores) keep their first elements unless all
// is set.
func ggufSummarise(kv gguf.KV, all bool) ggufKV {
	v := kv.Value
	r := ggufKV{Key: kv.Key, Type: v.Type.String(), Value: v.Interface()}
	if x, ok := v.Float(); ok && v.Type == gguf.TypeFloat32 {
		r.Value = float32(x) // 1e-05, not 9.999999747378752e-06
	}
	if v.Type != gguf.TypeArray {
		return r
	}
	r.Type = "array[" + v.Elem.String() + "]"
	r.Len = v.Len()
	if r.Len > ggufArrayShown && !all {
		head := make([]any, ggufArrayShown)
		for i := range head {
			head[i] = v.Index(i).Interface()
		}
		r.Value, r.Cut = head, true
	}
	if v.Elem == gguf.TypeArray { // arrays of arrays: Values, printed by String
		var parts []string
		for i := range min(r.Len, ggufArrayShown) {
			parts = append(parts, v.Index(i).String())
		}
		r.Value, r.Cut = parts, r.Len > ggufArrayShown
	}
	return r
}

// ggufCell formats a value for the table: strings quoted and cut at 60
// characters, arrays as their length and first elements.
func ggufCell(kv ggufKV) string {
	if s, ok := kv.Value.(string); ok {
		q := strconv.Quote(s)
		if len(q) > 60 {
			return fmt.Sprintf("%s… (%d bytes)", q[:57], len(s))
		}
		return q
	}
	if kv.Len > 0 || strings.HasPrefix(kv.Type, "array") {
		s := fmt.Sprint(kv.Value)
		if len(s) > 70 {
			s = s[:67] + "…"
		}
		if kv.Cut {
			return fmt.Sprintf("%d elements: %s …", kv.Len, s)
		}
		return fmt.Sprintf("%d elements: %s", kv.Len, s)
	}
	return fmt.Sprint(kv.Value)
}

func ggufShape(s []uint64) string {
	p := make([]string, len(s))
	for i, d := range s {
		p[i] = strconv.FormatUint(d, 10)
	}
	return "[" + strings.Join(p, ", ") + "]"
}
