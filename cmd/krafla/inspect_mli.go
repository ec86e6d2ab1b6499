package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/krafla/krafla/imatrix"
)

func init() { inspectors[imatrix.Magic], extensionMagic[".imatrix"] = inspectMLI, imatrix.Magic }

// mliReport is what `krafla inspect --json` prints for an importance matrix.
type mliReport struct {
	Path             string              `json:"path"`
	Kind             string              `json:"kind"` // "imatrix"
	Magic            string              `json:"magic"`
	Version          int                 `json:"version"`
	NLayers          uint32              `json:"n_layers"`
	Dim              uint32              `json:"dim"`
	HiddenDim        uint32              `json:"hidden_dim"`
	QDim             int                 `json:"q_dim"`        // effective q_dim
	QDimStored       uint32              `json:"q_dim_stored"` // 0 when equal to dim
	LayerTokens      uint64              `json:"layer_tokens"`
	ClassifierTokens uint64              `json:"classifier_tokens"`
	Sums             int                 `json:"sums"`
	Slots            []imatrix.SlotStats `json:"slots"` // per layer, in file order; the classifier last (layer -1)
}

// inspectMLI validates an MLI1 file and prints its header and a summary of every
// slot (opt.Tensors has nothing more to list for this kind).
func inspectMLI(path string, opt inspectOptions, out io.Writer) error {
	f, err := imatrix.Open(path)
	if err != nil {
		if errors.Is(err, imatrix.ErrFormat) {
			return fmt.Errorf("ML_E_FORMAT: %w", err)
		}
		return fmt.Errorf("ML_E_IO: %w", err)
	}
	r := mliReport{
		Path: path, Kind: "imatrix", Magic: imatrix.Magic, Version: imatrix.Version,
		NLayers: f.NLayers, Dim: f.Dim, HiddenDim: f.HiddenDim, QDim: f.QDimEff(), QDimStored: f.QDim,
		LayerTokens: f.LayerTokens, ClassifierTokens: f.ClassifierTokens, Sums: len(f.Sums),
	}
	for l := 0; l < int(f.NLayers); l++ {
		for s := imatrix.AttnIn; s < imatrix.NumSlots; s++ {
			r.Slots = append(r.Slots, f.Stats(l, s))
		}
	}
	r.Slots = append(r.Slots, f.ClassifierStats())
	if opt.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}

	fmt.Fprintf(out, "%s: valid importance matrix (MLI1 version %d), %d layers, %d layer tokens\n",
		path, r.Version, r.NLayers, r.LayerTokens)
	rows := [][]string{
		{"n_layers", fmtU(uint64(r.NLayers))},
		{"dim", fmtU(uint64(r.Dim))},
		{"hidden_dim", fmtU(uint64(r.HiddenDim))},
		{"q_dim", qdimCell(r)},
		{"layer tokens", fmtU(r.LayerTokens)},
		{"classifier tokens", fmtU(r.ClassifierTokens)},
		{"sums", strconv.Itoa(r.Sums)},
	}
	if err := mlbTable(out, "Header", []string{"field", "value"}, rows); err != nil {
		return err
	}
	rows = rows[:0]
	for _, s := range r.Slots {
		layer := strconv.Itoa(s.Layer)
		if s.Layer < 0 {
			layer = "-"
		}
		row := []string{layer, s.Slot, s.Matrices, strconv.Itoa(s.Channels), strconv.Itoa(s.Zero)}
		if s.HasStats {
			row = append(row, fmt.Sprintf("%.4g", s.MeanSq), fmt.Sprintf("%.3g", s.MaxRatio), fmt.Sprintf("%.3g", s.MinRatio), "yes")
		} else {
			row = append(row, "-", "-", "-", "none: x² fallback")
		}
		rows = append(rows, row)
	}
	return mlbTable(out, "Slots", []string{"layer", "slot", "matrices", "channels", "zero",
		"mean square", "max/mean", "min/mean", "importance"}, rows)
}

func fmtU(v uint64) string { return strconv.FormatUint(v, 10) }

func qdimCell(r mliReport) string {
	if r.QDimStored == 0 {
		return fmt.Sprintf("%d (stored 0: equal to dim)", r.QDim)
	}
	return strconv.Itoa(r.QDim)
}
