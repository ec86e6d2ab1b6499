package infer

import "testing"

// TestKVSizes12: the element sizes and cache lengths worked out by hand from
// the layout (keys in whole blocks of 16 slots, values slot-major), not from
// the code: an f16 element is 2 bytes, an f32 one 4; 20 slots of 8 channels
// take 2 key blocks (32·8 = 256) plus 20·8 = 160 values; 16 slots of 4 take
// one block (64) plus 64; 1 slot of 3 takes one block (48) plus 3.
func TestKVSizes12(t *testing.T) {
	if kvBlock != 16 {
		t.Fatalf("kvBlock = %d, the cases below assume 16", kvBlock)
	}
	if got := KVF16.bytes(); got != 2 {
		t.Errorf("KVF16.bytes() = %d, want 2", got)
	}
	if got := KVF32.bytes(); got != 4 {
		t.Errorf("KVF32.bytes() = %d, want 4", got)
	}
	for _, tc := range []struct {
		slots, kvd int
		want       int64
	}{
		{20, 8, 416},
		{16, 4, 128},
		{1, 3, 51},
		{33, 2, 96 + 66},
	} {
		if got := kvLen(tc.slots, tc.kvd); got != tc.want {
			t.Errorf("kvLen(%d, %d) = %d, want %d", tc.slots, tc.kvd, got, tc.want)
		}
	}
}
