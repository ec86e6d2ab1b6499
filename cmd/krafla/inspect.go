package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/krafla/krafla/mlb"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"
)

func init() {
	addCommand(newInspectCmd)
	inspectors[mlb.Magic] = inspectMLB
	extensionMagic[".mlb"] = mlb.Magic
}

func newInspectCmd() *cobra.Command {
	var opt inspectOptions
	c := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Validate a .mlb, .mlt or importance-matrix file and describe it",
		Long: `inspect validates FILE completely and prints what it holds. The kind of file
is recognised by its magic: MLB1 (.mlb model), MLT1 (.mlt tokenizer), MLI1
(importance matrix) or GGUF (llama.cpp's model files).

For a model it prints the header fields (name, offset, value, meaning), the
derived values, a summary per layer (sliding window, local RoPE, no RoPE,
linear attention, KV cache bytes per position) and totals (parameters, bits per
weight, file size); --tensors adds every array of the body with its type, shape,
offset and size. --json prints the same for scripts, header fields under their
SPEC.md names.

For a tokenizer it prints the kind, flags, special tokens, stop tokens and
samples of the tokens and merges; --tensors lists every token and merge. For
an importance matrix it prints the header and a summary of every slot.

For a GGUF file it prints the metadata (long arrays such as the tokens and
merges summarised by their first elements; --tensors shows them whole), the
tensor types with their counts and bytes, and totals; --tensors adds every
tensor's name, type, shape (ggml order: the contiguous dimension first),
offset and size.

An invalid file prints its code and the reason (e.g. ML_E_SHAPE: n_kv_heads 3
does not divide n_heads 4) and exits with status 1.`,
		Example: `  krafla inspect llama.mlb
  krafla inspect llama.mlb --tensors          # every array: type, shape, offset, bytes
  krafla inspect llama.mlt
  krafla inspect llama.mlb --json | jq .totals`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			p, err := modelPath(c.Context(), args[0], c.ErrOrStderr())
			if err != nil {
				return err
			}
			return runInspect(p, opt, c.OutOrStdout())
		},
	}
	c.Flags().BoolVar(&opt.JSON, "json", false, "print JSON instead of tables")
	c.Flags().BoolVar(&opt.Tensors, "tensors", false, "also list every array of the body (tokenizer: every token and merge)")
	return c
}

// runInspect reads the file's magic and hands it to the inspector of that kind.
func runInspect(path string, opt inspectOptions, out io.Writer) error {
	// Only regular files: opening a FIFO would wait for a writer forever, and
	// a folder or a device is never a model.
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("ML_E_IO: %w", err)
	}
	switch {
	case st.IsDir():
		return fmt.Errorf("ML_E_IO: %s: is a folder, want a .mlb, .mlt or MLI1 file", path)
	case !st.Mode().IsRegular():
		return fmt.Errorf("ML_E_IO: %s: %s, not a regular file", path, fileKind(st.Mode()))
	}
	// A known extension names the loader that validates the file, whatever it
	// holds (a GGUF file named .mlb is an .mlb with a bad magic: ML_E_FORMAT);
	// the content is sniffed only for other names.
	if magic, ok := extensionMagic[strings.ToLower(filepath.Ext(path))]; ok {
		return inspectors[magic](path, opt, out)
	}
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("ML_E_IO: %w", err)
	}
	var head [9]byte // the magic, and enough to recognise a safetensors file
	n, err := io.ReadFull(fh, head[:])
	fh.Close()
	magic := head[:min(n, 4)]
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("ML_E_IO: %s: %w", path, err)
	}
	if n < 4 {
		return fmt.Errorf("ML_E_FORMAT: %s: file of %d bytes is too short to hold a magic", path, n)
	}
	inspect, ok := inspectors[string(magic)]
	if !ok {
		known := make([]string, 0, len(inspectors))
		for k := range inspectors {
			known = append(known, k)
		}
		sort.Strings(known)
		return fmt.Errorf("ML_E_FORMAT: %s: unknown file type: magic %q is none of %s%s",
			path, magic, strings.Join(known, ", "), foreignHint(head[:n]))
	}
	return inspect(path, opt, out)
}

// extensionMagic maps the extensions of the files inspect reads (lower case)
// to the magic of their inspector; each inspector's init adds its own.
var extensionMagic = map[string]string{}

// foreignHint recognises the files people most often give inspect by
// mistake and says what to do with them.
func foreignHint(head []byte) string {
	switch {
	case len(head) == 9 && head[8] == '{':
		return " (a safetensors file: convert its folder with krafla convert DIR)"
	case bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("{")):
		return " (JSON: a tokenizer.json becomes an .mlt with krafla tokenize)"
	}
	return ""
}

// fileKind names a file mode that is not a regular file.
func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeIrregular != 0:
		return "an irregular file"
	}
	return "a special file"
}

// mlbField is one header field as inspect reports it.
type mlbField struct {
	Name    string `json:"name"`
	Offset  int    `json:"offset"`
	Type    string `json:"type"`
	Value   any    `json:"value"`
	Meaning string `json:"meaning"`
}

// mlbHeaderJSON prints the header as one object in offset order, keyed by the
// SPEC.md names (encoding/json would sort a map).
type mlbHeaderJSON []mlbField

func (h mlbHeaderJSON) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range h {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.Name)
		v, err := json.Marshal(f.Value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type mlbDerived struct {
	HeadDim        int     `json:"head_dim"`
	QDim           int     `json:"q_dim"`
	KVDim          int     `json:"kv_dim"`
	RotDim         int     `json:"rot_dim"`
	FFNDim         int     `json:"ffn_dim"`     // true FFN width: true_hidden_dim, or hidden_dim
	FFNPadding     int     `json:"ffn_padding"` // zero channels hidden_dim − ffn_dim
	GQAGroup       int     `json:"gqa_group"`   // query heads per KV head
	EmbedScale     float64 `json:"embed_scale"`
	AttnScale      float64 `json:"attn_scale"`
	LinQKVDim      int     `json:"lin_qkv_dim,omitempty"`
	LinVDim        int     `json:"lin_v_total,omitempty"`
	AttnLayers     int     `json:"attention_layers"`
	LinearLayers   int     `json:"linear_layers"`
	SlidingLayers  int     `json:"sliding_layers"`
	LocalRoPE      int     `json:"local_rope_layers"`
	NoRoPE         int     `json:"no_rope_layers"`
	ClassifierType string  `json:"classifier"` // "tok_emb (shared)" or "wcls"
}

type mlbLayer struct {
	Layer      int     `json:"layer"`
	Flags      uint8   `json:"flags"`
	Kind       string  `json:"kind"`           // "attention" or "linear"
	Window     uint32  `json:"sliding_window"` // 0: full attention
	LocalRoPE  bool    `json:"local_rope"`
	NoRoPE     bool    `json:"no_rope"`
	RopeTheta  float32 `json:"rope_theta"` // the base the layer uses (0 without RoPE)
	KVBytes    int64   `json:"kv_cache_bytes_per_position"`
	Parameters int64   `json:"parameters"`
	Bytes      int64   `json:"bytes"`
}

type mlbTotals struct {
	Parameters       int64            `json:"parameters"`
	QuantParameters  int64            `json:"quantized_parameters"`
	Q8Parameters     int64            `json:"q8_0_parameters"`
	Q4Parameters     int64            `json:"q4_0_parameters"`
	TypeParameters   map[string]int64 `json:"type_parameters,omitempty"` // a mixed file (wtype 3): parameters per matrix type
	QuantBytes       int64            `json:"quantized_bytes"`           // quants and scales, without padding
	BitsPerWeight    float64          `json:"bits_per_weight"`           // of the quantized matrices
	FileBitsPerParam float64          `json:"file_bits_per_parameter"`
	FileSize         int64            `json:"file_size"`
	KVBytesPerPos    int64            `json:"kv_cache_bytes_per_position"`
	KVBytesMaxSeq    int64            `json:"kv_cache_bytes_at_max_seq"`
	Tensors          int              `json:"tensors"`
	Arrays           int              `json:"arrays"`
}

type mlbArray struct {
	Name   string `json:"name"`
	Tensor string `json:"tensor"`
	Type   string `json:"type"`
	Rows   int    `json:"rows"`
	Cols   int    `json:"cols"`
	Offset int64  `json:"offset"`
	Bytes  int64  `json:"bytes"`
}

type mlbReport struct {
	Path    string        `json:"path"`
	Kind    string        `json:"kind"` // "model"
	Magic   string        `json:"magic"`
	Version uint32        `json:"version"`
	Header  mlbHeaderJSON `json:"header"`
	Flags   []int         `json:"layer_flag_bytes,omitempty"` // ints: []uint8 would print as base64
	Derived mlbDerived    `json:"derived"`
	Layers  []mlbLayer    `json:"layers"`
	Totals  mlbTotals     `json:"totals"`
	Arrays  []mlbArray    `json:"arrays,omitempty"`
}

// kvBytesPerPos is the KV cache of an attention layer per position: keys and
// values of kv_dim float32 each (how infer stores them).
func kvBytesPerPos(h *mlb.Header) int64 { return 2 * int64(h.KVDim()) * 4 }

// mlbBuildReport gathers everything inspect prints from a loaded file.
func mlbBuildReport(f *mlb.File, withArrays bool) mlbReport {
	h := &f.Header
	r := mlbReport{Path: f.Path, Kind: "model", Magic: mlb.Magic, Version: h.Version}
	r.Header = append(r.Header, mlbField{Name: "magic", Offset: 0, Type: "char[4]", Value: mlb.Magic, Meaning: "file type"})
	for _, fd := range mlb.Fields() {
		t := "u32"
		if fd.Float {
			t = "f32"
		}
		r.Header = append(r.Header, mlbField{Name: fd.Name, Offset: fd.Offset, Type: t, Value: fd.Value(h), Meaning: fd.Meaning})
	}
	if h.PairVersion != 0 { // the pair record (docs/FORMATS.md), shown where a file has one
		r.Header = append(r.Header,
			mlbField{Name: "pair_version", Offset: mlb.PairVersionOffset, Type: "u32", Value: h.PairVersion, Meaning: "pair record: 1, pair_id follows"},
			mlbField{Name: "pair_id", Offset: mlb.PairIDOffset, Type: "u8[16]", Value: hex.EncodeToString(h.PairID[:]), Meaning: "the id the tokenizer written with this model carries"})
	}
	for _, b := range h.Flags {
		r.Flags = append(r.Flags, int(b))
	}

	d := &r.Derived
	d.HeadDim, d.QDim, d.KVDim, d.RotDim = h.HeadDimEff(), h.QDim(), h.KVDim(), h.RotDimEff()
	d.FFNDim, d.FFNPadding = h.FFNDim(), int(h.HiddenDim)-h.FFNDim()
	d.GQAGroup = int(h.NHeads / h.NKVHeads)
	d.EmbedScale = float64(h.EmbedScale)
	if h.EmbedScale == 0 {
		d.EmbedScale = 1
	}
	d.AttnScale = float64(h.AttnScale)
	if h.AttnScale == 0 {
		d.AttnScale = 1 / math.Sqrt(float64(d.HeadDim))
	}
	d.ClassifierType = "wcls"
	if h.SharedClassifier != 0 {
		d.ClassifierType = "tok_emb (shared)"
	}

	// Parameters and bytes per layer, from the arrays (their names start with
	// "blk.N.").
	layerParams := make([]int64, h.NLayers)
	layerBytes := make([]int64, h.NLayers)
	tensorLayer := map[string]int{}
	for _, t := range f.Tensors {
		l := -1
		if rest, ok := strings.CutPrefix(t.Name, "blk."); ok {
			if i := strings.IndexByte(rest, '.'); i > 0 {
				l, _ = strconv.Atoi(rest[:i])
			}
		}
		tensorLayer[t.Name] = l
		if t.Type == mlb.U8 {
			continue
		}
		n := t.Elems()
		r.Totals.Parameters += n
		if l >= 0 {
			layerParams[l] += n
		}
		switch t.Type {
		case mlb.Q8_0:
			r.Totals.Q8Parameters += n
		case mlb.Q4_0:
			r.Totals.Q4Parameters += n
		}
		if h.WType == mlb.WTypeMixed && t.Type.Quantized() {
			if r.Totals.TypeParameters == nil {
				r.Totals.TypeParameters = map[string]int64{}
			}
			r.Totals.TypeParameters[t.Type.String()] += n
			r.Totals.QuantParameters += n
		}
	}
	for _, a := range f.Arrays {
		if l := tensorLayer[a.Tensor]; l >= 0 {
			layerBytes[l] += a.Bytes
		}
		switch a.Elem {
		case mlb.ElemQ8, mlb.ElemQ4, mlb.ElemScaleF32, mlb.ElemScaleF16, mlb.ElemBlocks:
			r.Totals.QuantBytes += a.Bytes
		}
		if withArrays {
			typ := a.Elem.String()
			if a.Elem == mlb.ElemBlocks {
				typ = strings.ToLower(a.Type.String()) + " blocks"
			}
			r.Arrays = append(r.Arrays, mlbArray{Name: a.Name, Tensor: a.Tensor, Type: typ,
				Rows: a.Rows, Cols: a.Cols, Offset: a.Offset, Bytes: a.Bytes})
		}
	}
	if h.WType != mlb.WTypeMixed {
		r.Totals.QuantParameters = r.Totals.Q8Parameters + r.Totals.Q4Parameters
	}
	if r.Totals.QuantParameters > 0 {
		r.Totals.BitsPerWeight = float64(r.Totals.QuantBytes) * 8 / float64(r.Totals.QuantParameters)
	}
	if r.Totals.Parameters > 0 {
		r.Totals.FileBitsPerParam = float64(f.Size) * 8 / float64(r.Totals.Parameters)
	}
	r.Totals.FileSize = f.Size
	r.Totals.Tensors, r.Totals.Arrays = len(f.Tensors), len(f.Arrays)

	for l := 0; l < int(h.NLayers); l++ {
		fl := h.LayerFlag(l)
		ly := mlbLayer{Layer: l, Flags: fl, Kind: "attention", Parameters: layerParams[l], Bytes: layerBytes[l]}
		if h.LayerFlags != 0 {
			ly.Flags = h.Flags[l]
		}
		switch {
		case fl&mlb.FlagLinear != 0:
			ly.Kind = "linear"
			d.LinearLayers++
		default:
			d.AttnLayers++
			ly.KVBytes = kvBytesPerPos(h)
			ly.RopeTheta = h.RopeTheta
			if fl&mlb.FlagSliding != 0 {
				ly.Window = h.SlidingWindow
				d.SlidingLayers++
			}
			if fl&mlb.FlagLocalRoPE != 0 {
				ly.LocalRoPE, ly.RopeTheta = true, h.RopeLocalTheta
				d.LocalRoPE++
			}
			if fl&mlb.FlagNoRoPE != 0 {
				ly.NoRoPE, ly.RopeTheta = true, 0
				d.NoRoPE++
			}
		}
		r.Totals.KVBytesPerPos += ly.KVBytes
		r.Layers = append(r.Layers, ly)
	}
	if d.LinearLayers > 0 {
		d.LinQKVDim, d.LinVDim = h.LinQKVDim(), h.LinVDimTotal()
	}
	r.Totals.KVBytesMaxSeq = r.Totals.KVBytesPerPos * int64(h.MaxSeq)
	return r
}

// inspectMLB validates an .mlb file and prints its report.
func inspectMLB(path string, opt inspectOptions, out io.Writer) error {
	f, err := mlb.Open(path)
	if err != nil {
		return err // its text starts with the code: ML_E_FORMAT: path: ...
	}
	defer f.Close()
	r := mlbBuildReport(f, opt.Tensors)
	if opt.JSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return mlbPrintTables(out, &f.Header, r, opt.Tensors)
}

// ffnDim describes the true FFN width and the padding hidden_dim adds to it.
func ffnDim(d mlbDerived) string {
	if d.FFNPadding == 0 {
		return strconv.Itoa(d.FFNDim)
	}
	return fmt.Sprintf("%d (hidden_dim %d: %d zero channels of padding)", d.FFNDim, d.FFNDim+d.FFNPadding, d.FFNPadding)
}

func mlbFmtValue(v any) string {
	switch x := v.(type) {
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	}
	return fmt.Sprint(v)
}

func mlbYes(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}

// mlbTable renders one table with a title line above it.
func mlbTable(out io.Writer, title string, header []string, rows [][]string) error {
	fmt.Fprintf(out, "\n%s\n", title)
	// Keep the headers as written: auto-format would turn "RoPE" into "RO PE".
	t := tablewriter.NewTable(out, tablewriter.WithHeaderAutoFormat(tw.Off))
	t.Header(header)
	if err := t.Bulk(rows); err != nil {
		return err
	}
	return t.Render()
}

func mlbBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%d (%.2f GiB)", n, float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%d (%.2f MiB)", n, float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d (%.1f KiB)", n, float64(n)/(1<<10))
	}
	return strconv.FormatInt(n, 10)
}

func mlbPrintTables(out io.Writer, h *mlb.Header, r mlbReport, withArrays bool) error {
	wt := map[uint32]string{mlb.WTypeQ8_0: "Q8_0", mlb.WTypeQ4_0: "Q4_0", mlb.WTypeMixed: "mixed types"}[h.WType]
	fmt.Fprintf(out, "%s: valid .mlb model (MLB1 version %d), %s, %d layers, %d parameters\n",
		r.Path, h.Version, wt, h.NLayers, r.Totals.Parameters)

	var rows [][]string
	for _, f := range r.Header {
		rows = append(rows, []string{f.Name, strconv.Itoa(f.Offset), f.Type, mlbFmtValue(f.Value), f.Meaning})
	}
	if err := mlbTable(out, "Header", []string{"field", "offset", "type", "value", "meaning"}, rows); err != nil {
		return err
	}

	d := r.Derived
	rows = [][]string{
		{"head_dim", strconv.Itoa(d.HeadDim), "head_dim, or dim / n_heads"},
		{"q_dim", strconv.Itoa(d.QDim), "head_dim × n_heads"},
		{"kv_dim", strconv.Itoa(d.KVDim), "head_dim × n_kv_heads"},
		{"rot_dim", strconv.Itoa(d.RotDim), "dimensions RoPE rotates per head"},
		{"ffn_dim", ffnDim(d), "true FFN width"},
		{"gqa_group", strconv.Itoa(d.GQAGroup), "query heads per KV head"},
		{"embed_scale", strconv.FormatFloat(d.EmbedScale, 'g', 6, 64), "factor on embedding rows"},
		{"attn_scale", strconv.FormatFloat(d.AttnScale, 'g', 6, 64), "attention score factor"},
		{"classifier", d.ClassifierType, "matrix producing the logits"},
		{"layers", fmt.Sprintf("%d attention, %d linear", d.AttnLayers, d.LinearLayers), ""},
		{"sliding / local RoPE / no RoPE", fmt.Sprintf("%d / %d / %d", d.SlidingLayers, d.LocalRoPE, d.NoRoPE), "attention layers with each"},
	}
	if d.LinearLayers > 0 {
		rows = append(rows,
			[]string{"lin_qkv_dim", strconv.Itoa(d.LinQKVDim), "2·lin_k_heads·lin_k_dim + lin_v_heads·lin_v_dim"},
			[]string{"lin_v_total", strconv.Itoa(d.LinVDim), "lin_v_heads·lin_v_dim"})
	}
	if err := mlbTable(out, "Derived values", []string{"name", "value", "meaning"}, rows); err != nil {
		return err
	}

	rows = rows[:0]
	for _, l := range r.Layers {
		win := "-"
		if l.Window != 0 {
			win = strconv.FormatUint(uint64(l.Window), 10)
		}
		theta := "-"
		if l.Kind == "attention" && !l.NoRoPE {
			theta = strconv.FormatFloat(float64(l.RopeTheta), 'g', -1, 32)
		}
		kv := "none (fixed state)"
		if l.Kind == "attention" {
			kv = strconv.FormatInt(l.KVBytes, 10)
		}
		rows = append(rows, []string{strconv.Itoa(l.Layer), fmt.Sprintf("%#x", l.Flags), l.Kind, win,
			mlbYes(l.LocalRoPE), mlbYes(l.NoRoPE), theta, kv, strconv.FormatInt(l.Parameters, 10), mlbBytes(l.Bytes)})
	}
	if err := mlbTable(out, "Layers", []string{"layer", "flags", "kind", "sliding window", "local RoPE", "no RoPE",
		"RoPE base", "KV bytes/position", "parameters", "bytes"}, rows); err != nil {
		return err
	}

	t := r.Totals
	rows = [][]string{
		{"parameters", strconv.FormatInt(t.Parameters, 10)},
		{"quantized parameters", mlbQuantSplit(t)},
		{"bits per weight", fmt.Sprintf("%.3f (quantized matrices, scales included)", t.BitsPerWeight)},
		{"file bits per parameter", fmt.Sprintf("%.3f", t.FileBitsPerParam)},
		{"file size", mlbBytes(t.FileSize)},
		{"KV cache per position", mlbBytes(t.KVBytesPerPos) + " (float32 keys and values)"},
		{"KV cache at max_seq", mlbBytes(t.KVBytesMaxSeq)},
		{"tensors / arrays", fmt.Sprintf("%d / %d", t.Tensors, t.Arrays)},
	}
	if err := mlbTable(out, "Totals", []string{"total", "value"}, rows); err != nil {
		return err
	}

	if withArrays {
		rows = rows[:0]
		for _, a := range r.Arrays {
			rows = append(rows, []string{a.Name, a.Type, fmt.Sprintf("%d × %d", a.Rows, a.Cols),
				strconv.FormatInt(a.Offset, 10), strconv.FormatInt(a.Bytes, 10)})
		}
		if err := mlbTable(out, "Arrays", []string{"name", "type", "shape", "offset", "bytes"}, rows); err != nil {
			return err
		}
	}
	return nil
}

// mlbQuantSplit is the quantized parameters by type: Q8_0 and Q4_0, or in a
// mixed file every type it uses, in type-code order.
func mlbQuantSplit(t mlbTotals) string {
	if t.TypeParameters == nil {
		return fmt.Sprintf("%d (Q8_0 %d, Q4_0 %d)", t.QuantParameters, t.Q8Parameters, t.Q4Parameters)
	}
	var parts []string
	for c := uint8(1); ; c++ {
		typ, ok := mlb.TypeOfCode(c)
		if !ok {
			break
		}
		if n, ok := t.TypeParameters[typ.String()]; ok {
			parts = append(parts, fmt.Sprintf("%s %d", typ, n))
		}
	}
	return fmt.Sprintf("%d (%s)", t.QuantParameters, strings.Join(parts, ", "))
}
