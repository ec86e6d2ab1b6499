package asm

import (
	"fmt"
	"os"
	"strings"
)

// Kernel names a kernel variant.
type Kernel int

// The variants, in increasing order of preference.
const (
	Generic Kernel = iota // pure Go
	AVX2                  // VPMADDUBSW + VPMADDWD
	AVX512                // AVX-512 F/BW/VL + VNNI (VPDPBUSD)
	NEON                  // arm64 Advanced SIMD (SMULL + SADALP)
	DotProd               // arm64 NEON + ARMv8.2 dot product (SDOT)
	I8MM                  // arm64 NEON + dot product + int8 matrix multiply (SMMLA)
)

// lastKernel is the last variant.
const lastKernel = I8MM

var kernelNames = [...]string{Generic: "generic", AVX2: "avx2", AVX512: "avx512", NEON: "neon", DotProd: "dotprod", I8MM: "i8mm"}

// String returns the name KRAFLA_KERNEL uses: "generic", "avx2", "avx512",
// "neon", "dotprod" or "i8mm".
func (k Kernel) String() string {
	if k >= 0 && int(k) < len(kernelNames) {
		return kernelNames[k]
	}
	return fmt.Sprintf("Kernel(%d)", int(k))
}

// Description returns a human name: "pure Go", "AVX2", "AVX-512 VNNI",
// "NEON", "NEON dotprod" or "NEON I8MM".
func (k Kernel) Description() string {
	switch k {
	case Generic:
		return "pure Go"
	case AVX2:
		return "AVX2"
	case AVX512:
		return "AVX-512 VNNI"
	case NEON:
		return "NEON"
	case DotProd:
		return "NEON dotprod"
	case I8MM:
		return "NEON I8MM"
	}
	return k.String()
}

// ParseKernel parses a variant name as KRAFLA_KERNEL takes it.
func ParseKernel(s string) (Kernel, error) {
	for k, name := range kernelNames {
		if s == name {
			return Kernel(k), nil
		}
	}
	return Generic, fmt.Errorf("unknown kernel variant %q (want one of %s)", s, strings.Join(kernelNames[:], ", "))
}

// Available reports whether this CPU and build can run variant k.
func Available(k Kernel) bool {
	switch k {
	case Generic:
		return true
	case AVX2:
		return hasAVX2
	case AVX512:
		return hasAVX512
	case NEON:
		return hasNEON
	case DotProd:
		return hasDotProd
	case I8MM:
		return hasI8MM
	}
	return false
}

// AvailableKernels lists the variants this CPU and build can run, generic first.
func AvailableKernels() []Kernel {
	var ks []Kernel
	for k := Generic; k <= lastKernel; k++ {
		if Available(k) {
			ks = append(ks, k)
		}
	}
	return ks
}

// best returns the preferred available variant.
func best() Kernel {
	ks := AvailableKernels()
	return ks[len(ks)-1]
}

var (
	active  Kernel // the variant the kernels dispatch to
	initErr error  // KRAFLA_KERNEL's problem, if any
)

// EnvVar is the environment variable that forces a variant.
const EnvVar = "KRAFLA_KERNEL"

func init() {
	active, initErr = selectKernel(os.Getenv(EnvVar))
}

// selectKernel returns the variant for the value of KRAFLA_KERNEL ("" = best)
// and an error for an unknown or unavailable value, with the best variant.
func selectKernel(env string) (Kernel, error) {
	if env == "" {
		return best(), nil
	}
	k, err := ParseKernel(env)
	if err != nil {
		return best(), fmt.Errorf("%s=%s: %w", EnvVar, env, err)
	}
	if !Available(k) {
		return best(), fmt.Errorf("%s=%s: this CPU or build cannot run it (available: %s)", EnvVar, env, availableList())
	}
	return k, nil
}

func availableList() string {
	var names []string
	for _, k := range AvailableKernels() {
		names = append(names, k.String())
	}
	return strings.Join(names, ", ")
}

// Init returns the error, if any, of the KRAFLA_KERNEL value read at start-up:
// an unknown name or a variant this CPU lacks. The kernels then run the best
// available variant; a command should print the error and refuse to go on.
func Init() error { return initErr }

// Variant returns the active variant.
func Variant() Kernel { return active }

// Features describes the active variant for `krafla run -v` and `krafla bench`,
// e.g. "AVX-512 VNNI" or "pure Go (KRAFLA_KERNEL=generic)".
func Features() string {
	s := active.Description()
	if env := os.Getenv(EnvVar); env != "" && initErr == nil {
		s += " (" + EnvVar + "=" + env + ")"
	}
	return s
}

// Use makes k the active variant. It fails if k is unavailable. It is meant for
// tests, benchmarks and command-line flags, before kernels run: switching while
// another goroutine runs a kernel is a data race.
func Use(k Kernel) error {
	if !Available(k) {
		return fmt.Errorf("kernel variant %s is not available (available: %s)", k, availableList())
	}
	active = k
	return nil
}
