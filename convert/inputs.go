package convert

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// pickleExts are the extensions of PyTorch pickle checkpoints: unpickling
// runs whatever code the file names, so krafla never opens one.
var pickleExts = []string{".bin", ".pt", ".pth", ".ckpt"}

// pickleWayOut says how to turn the pickle checkpoint in dir into safetensors once.
func pickleWayOut(dir string) string {
	return fmt.Sprintf("The way out: convert the weights to safetensors once, where you trust the file: with transformers, "+
		"AutoModelForCausalLM.from_pretrained(%q).save_pretrained(OUT, safe_serialization=True), "+
		"or with the Hugging Face Hub's converter (https://huggingface.co/spaces/safetensors/convert); "+
		"or download the repository's model*.safetensors files if it has them.", dir)
}

// shardName matches the Hugging Face shard names model-00001-of-00004.safetensors.
var shardName = regexp.MustCompile(`^model-[0-9]+-of-[0-9]+\.safetensors$`)

// checkWeights returns nil when dir has the safetensors a checkpoint needs
// (model.safetensors or model.safetensors.index.json), and otherwise an error
// that names what the folder holds instead and what to do: pickle weights are
// refused for safety, ONNX and GGUF files are other formats, shards without
// their index cannot be put together. It runs before config.json is read, so
// a folder of GGUF files gets the hint instead of a missing config.json.
func checkWeights(dir string) error {
	for _, name := range []string{"model.safetensors.index.json", "model.safetensors"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return nil
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("convert: %w", err)
	}
	var pickles, onnx, ggufs, shards, other []string
	for _, e := range ents {
		name := e.Name()
		ext := strings.ToLower(filepath.Ext(name))
		switch {
		case e.IsDir():
			if name == "onnx" {
				onnx = append(onnx, name+string(filepath.Separator))
			}
		case slices.Contains(pickleExts, ext):
			pickles = append(pickles, name)
		case ext == ".onnx":
			onnx = append(onnx, name)
		case ext == ".gguf":
			ggufs = append(ggufs, name)
		case shardName.MatchString(name):
			shards = append(shards, name)
		case ext == ".safetensors":
			other = append(other, name)
		}
	}
	for _, l := range [][]string{pickles, onnx, ggufs, shards, other} {
		sort.Strings(l)
	}
	switch {
	case len(shards) > 0:
		return fmt.Errorf("convert: %s: %s but no model.safetensors.index.json: the index says which shard holds each tensor; download it with the shards",
			dir, fileList(shards))
	case len(other) == 1 && other[0] == "consolidated.safetensors":
		return fmt.Errorf("convert: %s: only consolidated.safetensors (native Mistral layout) found; use the Hugging Face model*.safetensors files", dir)
	case len(pickles) > 0:
		return fmt.Errorf("convert: %s: %s: PyTorch pickle weights are refused, because loading a pickle can execute code; krafla reads safetensors and GGUF.\n%s",
			dir, fileList(pickles), pickleWayOut(dir))
	case len(ggufs) > 0:
		return fmt.Errorf("convert: %s: %s: a GGUF file, not a checkpoint folder; give the file itself: krafla convert %s",
			dir, fileList(ggufs), filepath.Join(dir, ggufs[0]))
	case len(onnx) > 0:
		return fmt.Errorf("convert: %s: %s: ONNX graphs are not read; krafla converts Hugging Face checkpoints (config.json and model*.safetensors) and GGUF files: download the repository's safetensors weights instead",
			dir, fileList(onnx))
	case len(other) > 0:
		return fmt.Errorf("convert: %s: %s: safetensors not named model.safetensors (or listed by model.safetensors.index.json); a Hugging Face checkpoint names its weights so",
			dir, fileList(other))
	}
	return fmt.Errorf("convert: %s: neither model.safetensors nor model.safetensors.index.json found", dir)
}

// fileList names files for a message: "a.bin", "a.bin and b.bin" or "a.bin, b.bin and 3 more".
func fileList(names []string) string {
	switch n := len(names); {
	case n == 1:
		return names[0]
	case n == 2:
		return names[0] + " and " + names[1]
	default:
		return fmt.Sprintf("%s, %s and %d more", names[0], names[1], n-2)
	}
}

// missingShard is the error for a shard that the index lists but the folder lacks.
func missingShard(index, shard string, weightMap map[string]string) error {
	var tensors []string
	for name, file := range weightMap {
		if file == shard {
			tensors = append(tensors, name)
		}
	}
	sort.Strings(tensors)
	return fmt.Errorf("convert: %s: the shard %s is missing: %s lists it for %d tensors (first %q); download it again",
		filepath.Dir(index), shard, filepath.Base(index), len(tensors), tensors[0])
}
