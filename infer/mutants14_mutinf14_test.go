package infer

import (
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
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

// TestHugeAlloc14: hugeAlloc (Linux) returns n writable bytes, length and
// capacity n, starting on a 2 MiB boundary (its doc comment), and release
// unmaps them without error.
func TestHugeAlloc14(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("hugeAlloc maps huge pages on Linux only")
	}
	const huge = 2 << 20
	for _, n := range []int{1, 4096, huge - 1, huge, huge + 4097, 3 * huge} {
		b, release, err := hugeAlloc(n)
		if err != nil {
			t.Fatalf("hugeAlloc(%d): %v", n, err)
		}
		if len(b) != n || cap(b) != n {
			t.Errorf("hugeAlloc(%d): len %d, cap %d, want both %d", n, len(b), cap(b), n)
		}
		if a := uintptr(unsafe.Pointer(unsafe.SliceData(b))); a%huge != 0 {
			t.Errorf("hugeAlloc(%d): address %#x is not on a 2 MiB boundary", n, a)
		}
		b[n-1], b[0] = 2, 1
		if b[0] != 1 || n > 1 && b[n-1] != 2 {
			t.Errorf("hugeAlloc(%d): the bytes do not keep what was written", n)
		}
		if err := release(); err != nil {
			t.Errorf("hugeAlloc(%d): release: %v", n, err)
		}
	}
}
