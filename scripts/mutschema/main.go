// mutschema rewrites one Go file of a package into a mutant schema: every
// mutant gremlins v0.6.0 makes with its default mutators (arithmetic base,
// conditionals boundary and negation, increment/decrement, invert negatives)
// is compiled in and chosen at run time by KRAFLA_MUT=id, so the package is
// built once. The mutant list (id, line:col, mutator, from, to) goes to
// file -list. Used by mutschema.sh (beside it); see docs/RELIABILITY.md,
// "session 9 (mutfmt9)".
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

type mutant struct {
	id   int
	typ  string
	to   token.Token
	note string // "" runnable; else why not
}

type site struct {
	node  ast.Node
	start int
	end   int
	muts  []*mutant
	typ   string // Go type of the expression (or of X for inc/dec)
}

var enabled = map[token.Token][][2]any{
	token.ADD: {{"ARITHMETIC_BASE", token.SUB}},
	token.SUB: {{"INVERT_NEGATIVES", token.ADD}, {"ARITHMETIC_BASE", token.ADD}},
	token.MUL: {{"ARITHMETIC_BASE", token.QUO}},
	token.QUO: {{"ARITHMETIC_BASE", token.MUL}},
	token.REM: {{"ARITHMETIC_BASE", token.MUL}},
	token.EQL: {{"CONDITIONALS_NEGATION", token.NEQ}},
	token.NEQ: {{"CONDITIONALS_NEGATION", token.EQL}},
	token.GEQ: {{"CONDITIONALS_BOUNDARY", token.GTR}, {"CONDITIONALS_NEGATION", token.LSS}},
	token.GTR: {{"CONDITIONALS_BOUNDARY", token.GEQ}, {"CONDITIONALS_NEGATION", token.LEQ}},
	token.LEQ: {{"CONDITIONALS_BOUNDARY", token.LSS}, {"CONDITIONALS_NEGATION", token.GTR}},
	token.LSS: {{"CONDITIONALS_BOUNDARY", token.LEQ}, {"CONDITIONALS_NEGATION", token.GEQ}},
	token.INC: {{"INCREMENT_DECREMENT", token.DEC}},
	token.DEC: {{"INCREMENT_DECREMENT", token.INC}},
}

func main() {
	dir := flag.String("dir", "", "package directory")
	file := flag.String("file", "", "file name in the package")
	out := flag.String("out", "", "rewritten file")
	list := flag.String("list", "", "mutant list")
	skip := flag.String("skip", "", "comma-separated offsets of sites to leave alone")
	flag.Parse()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo, Dir: *dir}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil || len(pkgs) != 1 {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
	p := pkgs[0]
	if len(p.Errors) > 0 {
		fmt.Fprintln(os.Stderr, p.Errors)
		os.Exit(1)
	}
	var f *ast.File
	var fname string
	for i, gf := range p.CompiledGoFiles {
		if filepath.Base(gf) == *file {
			f, fname = p.Syntax[i], gf
		}
	}
	if f == nil {
		fmt.Fprintln(os.Stderr, "no file", *file)
		os.Exit(1)
	}
	src, _ := os.ReadFile(fname)
	fset := p.Fset
	tf := fset.File(f.Pos())
	off := func(pos token.Pos) int { return tf.Offset(pos) }
	skipped := map[int]bool{}
	for _, s := range strings.Split(*skip, ",") {
		var n int
		if _, err := fmt.Sscan(s, &n); err == nil {
			skipped[n] = true
		}
	}
	qual := func(pk *types.Package) string {
		if pk == p.Types {
			return ""
		}
		for _, im := range f.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			if path == pk.Path() {
				if im.Name != nil {
					return im.Name.Name
				}
				return pk.Name()
			}
		}
		return pk.Name()
	}
	typeOf := func(e ast.Expr) (string, bool) {
		tv, ok := p.TypesInfo.Types[e]
		if !ok {
			return "", false
		}
		t := tv.Type
		if b, ok := t.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
			if b.Kind() == types.UntypedBool {
				return "bool", true
			}
			return "", false
		}
		return types.TypeString(t, qual), true
	}
	var sites []*site
	var all []*mutant
	var lines []string
	nextID := 1
	inConst := func(n ast.Node) bool { return false }
	var constRanges [][2]token.Pos
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
			constRanges = append(constRanges, [2]token.Pos{g.Pos(), g.End()})
		}
	}
	inConst = func(n ast.Node) bool {
		for _, r := range constRanges {
			if n.Pos() >= r[0] && n.End() <= r[1] {
				return true
			}
		}
		return false
	}
	ast.Inspect(f, func(n ast.Node) bool {
		var tok token.Token
		var pos token.Pos
		var typExpr ast.Expr
		switch n := n.(type) {
		case *ast.BinaryExpr:
			tok, pos, typExpr = n.Op, n.OpPos, n
		case *ast.UnaryExpr:
			tok, pos, typExpr = n.Op, n.OpPos, n
		case *ast.IncDecStmt:
			tok, pos, typExpr = n.Tok, n.TokPos, n.X
		default:
			return true
		}
		ms, ok := enabled[tok]
		if !ok {
			return true
		}
		if _, isUnary := n.(*ast.UnaryExpr); isUnary && tok != token.SUB {
			return true
		}
		s := &site{node: n, start: off(n.Pos()), end: off(n.End())}
		typ, tok2 := typeOf(typExpr)
		s.typ = typ
		position := fset.Position(pos)
		for _, m := range ms {
			mu := &mutant{id: nextID, typ: m[0].(string), to: m[1].(token.Token)}
			nextID++
			switch {
			case inConst(n):
				mu.note = "CONST"
			case !tok2:
				mu.note = "UNTYPED"
			case skipped[s.start]:
				mu.note = "SKIPPED"
			case typ == "string" && (tok == token.ADD):
				mu.note = "NOT_VIABLE"
			}
			s.muts = append(s.muts, mu)
			all = append(all, mu)
			lines = append(lines, fmt.Sprintf("%d\t%s:%d:%d\t%s\t%s\t%s\t%s\t%d", mu.id, *file, position.Line, position.Column, mu.typ, tok, mu.to, orDash(mu.note), s.start))
		}
		sites = append(sites, s)
		return true
	})
	sort.SliceStable(sites, func(i, j int) bool { return sites[i].start < sites[j].start })
	var emit func(start, end int) string
	rewrite := func(s *site) string {
		var run []*mutant
		for _, m := range s.muts {
			if m.note == "" {
				run = append(run, m)
			}
		}
		switch n := s.node.(type) {
		case *ast.BinaryExpr:
			x, y := emit(off(n.X.Pos()), off(n.X.End())), emit(off(n.Y.Pos()), off(n.Y.End()))
			orig := fmt.Sprintf("(%s) %s (%s)", x, n.Op, y)
			if len(run) == 0 {
				return orig
			}
			var b strings.Builder
			fmt.Fprintf(&b, "func() %s { switch zzMutAt(%d, %d) { ", s.typ, run[0].id, run[len(run)-1].id)
			for i, m := range run {
				fmt.Fprintf(&b, "case %d: return (%s) %s (%s); ", i+1, x, m.to, y)
				_ = i
			}
			fmt.Fprintf(&b, "}; return %s }()", orig)
			return b.String()
		case *ast.UnaryExpr:
			x := emit(off(n.X.Pos()), off(n.X.End()))
			orig := fmt.Sprintf("-(%s)", x)
			if len(run) == 0 {
				return orig
			}
			return fmt.Sprintf("func() %s { if zzMutAt(%d, %d) != 0 { return +(%s) }; return %s }()", s.typ, run[0].id, run[len(run)-1].id, x, orig)
		case *ast.IncDecStmt:
			x := emit(off(n.X.Pos()), off(n.X.End()))
			if len(run) == 0 {
				return x + n.Tok.String()
			}
			op := "+="
			if n.Tok == token.DEC {
				op = "-="
			}
			return fmt.Sprintf("%s %s %s(zzMutStep(%d))", x, op, s.typ, run[0].id)
		}
		panic("site")
	}
	emit = func(start, end int) string {
		var b strings.Builder
		cur := start
		for _, s := range sites {
			if s.start < cur || s.end > end {
				continue
			}
			b.Write(src[cur:s.start])
			b.WriteString(rewrite(s))
			cur = s.end
		}
		b.Write(src[cur:end])
		return b.String()
	}
	res := emit(0, len(src))
	if err := os.WriteFile(*out, []byte(res), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.WriteFile(*list, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
