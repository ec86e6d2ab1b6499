package infer

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestAxpy14: axpy adds a·x to y element by element (its doc comment), worked
// by hand: y = (1, 2, 3) + 2·(0.5, −1, 4) = (2, 0, 11). Its one caller, the
// gated delta rule, gives the same output with the sign flipped (the state is
// kept negated), so only a direct call tells y + a·x from y − a·x.
func TestAxpy14(t *testing.T) {
	y := []float32{1, 2, 3}
	axpy(y, 2, []float32{0.5, -1, 4, 99}) // x may be longer than y
	if want := []float32{2, 0, 11}; !slices.Equal(y, want) {
		t.Errorf("axpy: y = %v, want %v", y, want)
	}
}

// TestCandHeapPop14: candHeap.Pop (heap.Interface's, which Sample's Push and
// Fix never call) removes and returns the last element.
func TestCandHeapPop14(t *testing.T) {
	h := candHeap{{1, 0.5}, {2, 0.25}, {3, 0.125}}
	x := h.Pop()
	if x != (cand{3, 0.125}) {
		t.Errorf("Pop returned %v, want {3 0.125}", x)
	}
	if want := (candHeap{{1, 0.5}, {2, 0.25}}); !slices.Equal(h, want) {
		t.Errorf("after Pop the heap is %v, want %v", h, want)
	}
}

// TestPhysicalMemory14: on Linux physicalMemory is the machine's RAM in bytes,
// MemTotal of /proc/meminfo (in kB) times 1024: both are the kernel's
// totalram pages, sysinfo giving them in units of mem_unit bytes.
func TestPhysicalMemory14(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("MemTotal is read from /proc/meminfo")
	}
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Skip("no /proc/meminfo")
	}
	var kb int64
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	if kb <= 0 {
		t.Skip("no MemTotal")
	}
	if got := physicalMemory(); got != kb*1024 {
		t.Errorf("physicalMemory() = %d, want MemTotal %d kB × 1024 = %d", got, kb, kb*1024)
	}
}
