package gguf

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strconv"
)

// Split sets are llama.cpp's gguf-split format: one model cut into N files
// named PREFIX-00001-of-0000N.gguf to PREFIX-0000N-of-0000N.gguf (the
// numbers five digits, from 1). Each file is a GGUF file of its own holding
// the metadata keys below and its share of the tensors; the first also
// holds the model's whole metadata (the others hold nothing else). The
// tensors of the set, in file order, are the model's.
const (
	KeySplitNo      = "split.no"            // u16: the file's index, from 0
	KeySplitCount   = "split.count"         // u16: the files in the set (0 or 1: not split)
	KeySplitTensors = "split.tensors.count" // i32: the tensors of the whole set
)

// splitNameRe is llama_split_prefix's rule: the name ends in
// -%05d-of-%05d.gguf.
var splitNameRe = regexp.MustCompile(`^(.+)-(\d{5})-of-(\d{5})\.gguf$`)

// SplitName reads a split file's name PREFIX-NNNNN-of-MMMMM.gguf: the
// prefix (the path without the suffix), its number (from 1) and the count.
// ok is false for any other name.
func SplitName(path string) (prefix string, no, count int, ok bool) {
	m := splitNameRe.FindStringSubmatch(path)
	if m == nil {
		return "", 0, 0, false
	}
	no, _ = strconv.Atoi(m[2])
	count, _ = strconv.Atoi(m[3])
	return m[1], no, count, true
}

// SplitPath is the path of split no (from 1) of count with that prefix:
// PREFIX-%05d-of-%05d.gguf (llama.cpp's llama_split_path).
func SplitPath(prefix string, no, count int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.gguf", prefix, no, count)
}

// splitKey reads a split key as a non-negative integer (llama.cpp writes
// u16 and i32; any integer type is taken, as its get_key converts).
func splitKey(f *File, key string, max uint64) (uint64, bool, error) {
	i, ok := f.kv[key]
	if !ok {
		return 0, false, nil
	}
	kv := f.KVs[i]
	n, ok := kv.Value.Uint()
	if !ok || n > max {
		return 0, true, &Error{Kind: ErrFormat, Path: f.Path, Offset: kv.Offset, Key: key,
			Msg: fmt.Sprintf("value %v (%s) is not an integer from 0 to %d", kv.Value, kv.Value.Type, max)}
	}
	return n, true, nil
}

// OpenSplit opens a GGUF file as Open does and, when its metadata says it
// is the first of a split set (split.count > 1), the other files of the
// set beside it, found by name as llama.cpp finds them. The File it
// returns is the model: the first file's metadata, and the tensors of
// every file in order (Tensor.Split says which; Splits lists the paths).
// Close releases every file. Each file must be where its name says, number
// itself (split.no) and count the set (split.count) as the first does, and
// the set must hold split.tensors.count tensors with no name twice; an
// error names the file and the rule, and a missing file is an ErrIO
// naming it. Given a later split, OpenSplit asks for the first.
func OpenSplit(path string) (*File, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	count, ok, err := splitKey(f, KeySplitCount, 0xffff)
	if err != nil || !ok || count <= 1 {
		if err != nil {
			f.Close()
			return nil, err
		}
		return f, nil // one file (a merged set says 0)
	}
	n := int(count)
	fail := func(err error) (*File, error) {
		f.Close()
		return nil, err
	}
	no, ok, err := splitKey(f, KeySplitNo, 0xffff)
	if err != nil {
		return fail(err)
	}
	prefix, nameNo, nameCount, named := SplitName(path)
	if !ok {
		return fail(&Error{Kind: ErrFormat, Path: path, Offset: -1, Key: KeySplitNo,
			Msg: fmt.Sprintf("missing: split.count says the file is one of %d splits, but not which", n)})
	}
	if no != 0 {
		first := "the file PREFIX-00001-of-NNNNN.gguf"
		if named {
			first = SplitPath(prefix, 1, nameCount)
		}
		return fail(&Error{Kind: ErrFormat, Path: path, Offset: -1, Key: KeySplitNo,
			Msg: fmt.Sprintf("this is split %d of %d: give the first split, %s, which holds the metadata", no+1, n, first)})
	}
	if !named || nameNo != 1 || nameCount != n {
		return fail(&Error{Kind: ErrFormat, Path: path, Offset: -1, Key: KeySplitCount,
			Msg: fmt.Sprintf("the file is the first of %d splits but is not named PREFIX-00001-of-%05d.gguf, so the others cannot be found", n, n)})
	}
	total, hasTotal, err := splitKey(f, KeySplitTensors, 0x7fffffff)
	if err != nil {
		return fail(err)
	}
	if !hasTotal {
		return fail(&Error{Kind: ErrFormat, Path: path, Offset: -1, Key: KeySplitTensors,
			Msg: fmt.Sprintf("missing: the first of %d splits must say how many tensors the set holds", n)})
	}
	f.Splits = []string{path}
	where := map[string]int{} // tensor name → split
	for _, t := range f.Tensors {
		where[t.Name] = 0
	}
	for i := 1; i < n; i++ {
		p := SplitPath(prefix, i+1, n)
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			return fail(&Error{Kind: ErrIO, Path: p, Offset: -1,
				Msg: fmt.Sprintf("split %d of %d is missing (the set of %s)", i+1, n, path), Err: fs.ErrNotExist})
		}
		g, err := Open(p)
		if err != nil {
			return fail(err)
		}
		mismatch := func(key, format string, a ...any) (*File, error) {
			g.Close()
			return fail(&Error{Kind: ErrFormat, Path: p, Offset: -1, Key: key, Msg: fmt.Sprintf(format, a...)})
		}
		gno, ok, err := splitKey(g, KeySplitNo, 0xffff)
		switch {
		case err != nil:
			g.Close()
			return fail(err)
		case !ok:
			return mismatch(KeySplitNo, "missing: every file of a split set says which split it is")
		case int(gno) != i:
			return mismatch(KeySplitNo, "the file says it is split %d, its name says %d of %d", gno+1, i+1, n)
		}
		gcount, ok, err := splitKey(g, KeySplitCount, 0xffff)
		switch {
		case err != nil:
			g.Close()
			return fail(err)
		case !ok:
			return mismatch(KeySplitCount, "missing: every file of a split set says how many splits there are")
		case int(gcount) != n:
			return mismatch(KeySplitCount, "the file says the set has %d splits, the first (%s) says %d", gcount, path, n)
		}
		if gt, ok, err := splitKey(g, KeySplitTensors, 0x7fffffff); err != nil {
			g.Close()
			return fail(err)
		} else if ok && gt != total {
			return mismatch(KeySplitTensors, "the file says the set holds %d tensors, the first (%s) says %d", gt, path, total)
		}
		for _, t := range g.Tensors {
			if j, dup := where[t.Name]; dup {
				g.Close()
				return fail(&Error{Kind: ErrFormat, Path: p, Offset: t.InfoOffset, Tensor: t.Name,
					Msg: fmt.Sprintf("also in split %d (%s): a tensor is in one split only", j+1, f.Splits[j])})
			}
			where[t.Name] = i
		}
		for _, t := range g.Tensors {
			t.Split = i
			f.tensor[t.Name] = len(f.Tensors)
			f.Tensors = append(f.Tensors, t)
		}
		f.Splits = append(f.Splits, p)
		if unmapF, unmapG := f.unmap, g.unmap; unmapG != nil {
			g.unmap = nil
			f.unmap = func() error {
				var err error
				if unmapF != nil {
					err = unmapF()
				}
				return errors.Join(err, unmapG())
			}
		}
	}
	if uint64(len(f.Tensors)) != total {
		return fail(&Error{Kind: ErrFormat, Path: path, Offset: -1, Key: KeySplitTensors,
			Msg: fmt.Sprintf("the %d splits hold %d tensors, the key says %d", n, len(f.Tensors), total)})
	}
	return f, nil
}
