//go:build (amd64 || arm64) && gc && !purego

package asm

import "testing"

// TestTileBytes14: TestPackedKChunks14's shapes are worked out for a chunk
// of 128 KiB of weights.
func TestTileBytes14(t *testing.T) {
	if tileBytes != chunkBytes14 {
		t.Fatalf("tileBytes = %d, TestPackedKChunks14 assumes %d: redo its shapes", tileBytes, chunkBytes14)
	}
}
