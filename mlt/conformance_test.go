package mlt

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/krafla/krafla/internal/testenv"
)

// hfCaseLine is one line of ../shared/tokenizers/*/cases.jsonl: what Hugging
// Face tokenizers 0.23.2 produced (see the README there for how).
type hfCaseLine struct {
	Text           string `json:"text"`
	IDs            []int  `json:"ids"`
	IDsWithSpecial []int  `json:"ids_with_special"`
	Decoded        string `json:"decoded"`
}

func readCaseLines(t testing.TB, path string) []hfCaseLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []hfCaseLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<26)
	for sc.Scan() {
		var c hfCaseLine
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s line %d: %v", path, len(out)+1, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	shippedMu  sync.Mutex
	shippedTok = map[string]*Tokenizer{}
)

// shipped returns the tokenizer of ../shared/tokenizers/<name> (or of
// ../shared/tokenizers-next/<name>), built once per test binary (gemma3 takes
// seconds).
func shipped(t testing.TB, name string) *Tokenizer {
	t.Helper()
	dir := testenv.Shared(t, "tokenizers", name)
	return shippedDir(t, name, dir)
}

func shippedDir(t testing.TB, name, dir string) *Tokenizer {
	t.Helper()
	shippedMu.Lock()
	defer shippedMu.Unlock()
	if tk, ok := shippedTok[dir]; ok {
		return tk
	}
	tk := fromHFViaFile(t, dir)
	shippedTok[dir] = tk
	return tk
}

// fromHFViaFile builds the tokenizer from tokenizer.json and round-trips it
// through the .mlt bytes, so the test exercises what users load.
func fromHFViaFile(t testing.TB, dir string) *Tokenizer {
	t.Helper()
	tk, err := FromHF(dir)
	if err != nil {
		t.Fatalf("FromHF(%s): %v", dir, err)
	}
	p, err := Parse(tk.Bytes())
	if err != nil {
		t.Fatalf("Parse(FromHF(%s).Bytes()): %v", dir, err)
	}
	return p
}

func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// conformanceDirs lists the folders of ../shared/tokenizers and
// ../shared/tokenizers-next that hold a cases.jsonl.
func conformanceDirs(t testing.TB) []string {
	var dirs []string
	for _, set := range []string{"tokenizers", "tokenizers-next"} {
		root := testenv.Shared(t, set)
		found, _ := filepath.Glob(filepath.Join(root, "*", "cases.jsonl"))
		for _, c := range found {
			dirs = append(dirs, filepath.Dir(c))
		}
	}
	if len(dirs) == 0 {
		t.Skip("no cases.jsonl under ../shared/tokenizers*")
	}
	return dirs
}

func TestConformance(t *testing.T) {
	for _, dir := range conformanceDirs(t) {
		name := filepath.Base(dir)
		cases := filepath.Join(dir, "cases.jsonl")
		t.Run(name, func(t *testing.T) {
			tk := shippedDir(t, name, dir)
			lines := readCaseLines(t, cases)
			var okIDs, okSpecial, okDecoded int
			fails := 0
			for i, c := range lines {
				got := tk.Encode(c.Text, false)
				if slices.Equal(got, c.IDs) {
					okIDs++
				} else if fails++; fails <= 5 {
					t.Errorf("case %d %q: ids\n got %v\nwant %v", i, short(c.Text), firstIDs(got), firstIDs(c.IDs))
				}
				got = tk.Encode(c.Text, true)
				if slices.Equal(got, c.IDsWithSpecial) {
					okSpecial++
				} else if fails++; fails <= 5 {
					t.Errorf("case %d %q: ids with special\n got %v\nwant %v", i, short(c.Text), firstIDs(got), firstIDs(c.IDsWithSpecial))
				}
				if d := tk.Decode(c.IDs); d == c.Decoded {
					okDecoded++
				} else if fails++; fails <= 5 {
					t.Errorf("case %d %q: decoded\n got %q\nwant %q", i, short(c.Text), short(d), short(c.Decoded))
				}
				// The stream decoder gives the same text, never splitting a character.
				sd := tk.NewStreamDecoder()
				var sb strings.Builder
				for _, id := range c.IDs {
					piece := sd.Add(id)
					if !utf8.ValidString(piece) {
						t.Errorf("case %d: stream piece %q is not valid UTF-8", i, piece)
					}
					sb.WriteString(piece)
				}
				sb.WriteString(sd.Flush())
				if sb.String() != c.Decoded {
					t.Errorf("case %d %q: stream decoded\n got %q\nwant %q", i, short(c.Text), short(sb.String()), short(c.Decoded))
				}
			}
			t.Logf("%s: ids %d/%d, ids_with_special %d/%d, decoded %d/%d",
				name, okIDs, len(lines), okSpecial, len(lines), okDecoded, len(lines))
		})
	}
}

// firstIDs shortens long id lists in failure messages.
func firstIDs(ids []int) []int {
	if len(ids) > 40 {
		return ids[:40]
	}
	return ids
}
