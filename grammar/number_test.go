package grammar

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestDecimalRangeExhaustive compares the grammar of random fractional
// bounds with exact rational comparison (math/big) on every plain decimal
// -?I(.F)? with I in 0..12 and up to three fraction digits: a text matches
// exactly when its value lies between the bounds.
func TestDecimalRangeExhaustive(t *testing.T) {
	var texts []string
	for neg := range 2 {
		for i := range 13 {
			base := fmt.Sprint(i)
			if neg == 1 {
				base = "-" + base
			}
			texts = append(texts, base)
			for n := 1; n <= 3; n++ {
				for f := range pow10(n) {
					texts = append(texts, fmt.Sprintf("%s.%0*d", base, n, f))
				}
			}
		}
	}
	vals := make([]*big.Rat, len(texts))
	for i, s := range texts {
		vals[i], _ = new(big.Rat).SetString(s)
	}
	r := rand.New(rand.NewPCG(3, 5))
	bnd := func() string {
		v := r.IntN(2000) - 1000 // -10.00..9.99 in hundredths
		switch r.IntN(4) {
		case 0:
			return fmt.Sprint(v / 100)
		case 1:
			return fmt.Sprintf("%.1f", float64(v/10)/10)
		}
		s := new(big.Rat).SetFrac64(int64(v), 100).FloatString(2)
		if r.IntN(3) == 0 {
			s += "0" // trailing zeros change nothing
		}
		return s
	}
	n := 60
	if testing.Short() {
		n = 15
	}
	for k := 0; k < n; k++ {
		lo, hi := bnd(), bnd()
		loKw := []string{"minimum", "exclusiveMinimum", ""}[r.IntN(3)]
		hiKw := []string{"maximum", "exclusiveMaximum", ""}[r.IntN(3)]
		if loKw == "" && hiKw == "" {
			loKw = "minimum"
		}
		ty := []string{"number", "number", "integer"}[r.IntN(3)]
		schema := `{"type":"` + ty + `"`
		if loKw != "" {
			schema += `,"` + loKw + `":` + lo
		}
		if hiKw != "" {
			schema += `,"` + hiKw + `":` + hi
		}
		schema += "}"
		in := func(v *big.Rat) bool {
			if ty == "integer" && !v.IsInt() {
				return false
			}
			if loKw != "" {
				c := v.Cmp(mustRat(lo))
				if c < 0 || (c == 0 && loKw == "exclusiveMinimum") {
					return false
				}
			}
			if hiKw != "" {
				c := v.Cmp(mustRat(hi))
				if c > 0 || (c == 0 && hiKw == "exclusiveMaximum") {
					return false
				}
			}
			return true
		}
		any := false
		for _, v := range vals {
			any = any || in(v)
		}
		g, err := CompileJSONSchema([]byte(schema))
		if err != nil {
			if !any && !(hiKw == "" || loKw == "") {
				continue // an empty range is refused; none of the texts fits
			}
			t.Fatalf("%s: %v", schema, err)
		}
		for i, s := range texts {
			want := in(vals[i])
			if ty == "integer" && want && s != vals[i].RatString() {
				want = false // integers are written as integers
			}
			if s == "-0" || (len(s) > 2 && s[:2] == "-0" && vals[i].Sign() == 0) {
				want = false // -0 is never produced (0 is)
			}
			if got := g.Matches([]byte(s)); got != want {
				t.Fatalf("%s: %s matches %v, its value is between the bounds: %v", schema, s, got, want)
			}
		}
	}
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}

func mustRat(s string) *big.Rat {
	v, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return v
}

func TestParseDec(t *testing.T) {
	for in, want := range map[string]dec{
		"0": {}, "-0": {}, "-0.0": {}, "1.50": {ip: 1, fp: "5"}, "-2.25e1": {neg: true, ip: 22, fp: "5"},
		"1e-3": {fp: "001"}, "12.5E-1": {ip: 1, fp: "25"}, "3E2": {ip: 300}, "0.000": {},
	} {
		got, err := parseDec(in)
		if err != nil || got != want {
			t.Errorf("parseDec(%s) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"1e16", "2e300", "1e-41", "-1000000000000001"} {
		if _, err := parseDec(in); err == nil {
			t.Errorf("parseDec(%s) accepted", in)
		}
	}
}
