package asm

import (
	"strings"
	"testing"
)

func TestSelectKernel(t *testing.T) {
	tests := []struct {
		env     string
		want    Kernel
		wantErr string
	}{
		{"", best(), ""},
		{"generic", Generic, ""},
		{"sse9", best(), "unknown kernel variant"},
		{"AVX2", best(), "unknown kernel variant"},
	}
	for _, k := range []Kernel{AVX2, AVX512, NEON, DotProd, I8MM} {
		if Available(k) {
			tests = append(tests, struct {
				env     string
				want    Kernel
				wantErr string
			}{k.String(), k, ""})
		} else {
			tests = append(tests, struct {
				env     string
				want    Kernel
				wantErr string
			}{k.String(), best(), "cannot run"})
		}
	}
	for _, tt := range tests {
		got, err := selectKernel(tt.env)
		if got != tt.want {
			t.Errorf("%q: got %v, want %v", tt.env, got, tt.want)
		}
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("%q: got error %v, want one containing %q", tt.env, err, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), EnvVar) {
			t.Errorf("%q: error %q does not name %s", tt.env, err, EnvVar)
		}
	}
}

func TestUse(t *testing.T) {
	defer func(k Kernel) { active = k }(active)
	for _, k := range []Kernel{Generic, AVX2, AVX512, NEON, DotProd, I8MM} {
		err := Use(k)
		if got, want := err == nil, Available(k); got != want {
			t.Errorf("Use(%v): got ok=%v, want %v", k, got, want)
		}
		if err == nil && Variant() != k {
			t.Errorf("Variant(): got %v, want %v", Variant(), k)
		}
	}
	if Use(Kernel(17)) == nil {
		t.Error("Use(Kernel(17)): got nil error, want one")
	}
}
