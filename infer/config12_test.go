package infer

import (
	"strings"
	"testing"
)

// cfg12 is a small valid configuration: 4 heads of 16 over dim 64, 2 KV heads.
func cfg12() Config {
	return Config{Dim: 64, NLayers: 2, NHeads: 4, NKVHeads: 2, HiddenDim: 128, Vocab: 10, MaxSeq: 16}
}

// lin12 makes layer 1 a linear-attention layer with the given lin_* sizes.
func lin12(k, v, dk, dv, conv int) func(*Config) {
	return func(c *Config) {
		c.LayerFlags = []uint8{0, flagLinear}
		c.LinK, c.LinV, c.LinDK, c.LinDV, c.LinConv = k, v, dk, dv, conv
	}
}

// TestResolveEdges: resolve at each check's edge, the expected values written
// from the rules in its comments (sizes positive, vocab at least 3, head_dim
// dim/n_heads when absent, yarn's attention factor 0 meaning 1, a sliding
// window flagging every layer when the file has no flag bytes, linear layers
// needing positive lin_* sizes).
func TestResolveEdges(t *testing.T) {
	bad := map[string]func(*Config){
		"dim":        func(c *Config) { c.Dim = 0 },
		"n_layers":   func(c *Config) { c.NLayers = 0 },
		"n_heads":    func(c *Config) { c.NHeads = 0 },
		"n_kv_heads": func(c *Config) { c.NKVHeads = 0 },
		"hidden_dim": func(c *Config) { c.HiddenDim = 0 },
		"max_seq":    func(c *Config) { c.MaxSeq = 0 },
		"vocab 2":    func(c *Config) { c.Vocab = 2 },
		"dim/heads":  func(c *Config) { c.Dim, c.NHeads, c.NKVHeads = 96, 5, 1 },
		"lin_k 0":    lin12(0, 2, 16, 16, 4),
		"lin_v 0":    lin12(1, 0, 16, 16, 4),
		"lin_k_dim":  lin12(1, 2, 0, 16, 4),
		"lin_v_dim":  lin12(1, 2, 16, 0, 4),
		"lin_conv 0": lin12(1, 2, 16, 16, 0),
		"lin_v 3/2":  lin12(2, 3, 16, 16, 4),
	}
	for name, f := range bad {
		c := cfg12()
		f(&c)
		if err := c.resolve(); err == nil || !strings.HasPrefix(err.Error(), "infer: config:") {
			t.Errorf("%s: resolve = %v, want an infer: config error", name, err)
		}
	}

	c := cfg12()
	lin12(1, 2, 16, 16, 4)(&c)
	if err := c.resolve(); err != nil || !c.isLinear(1) || c.isLinear(0) || c.LinQKV() != 64 || c.LinVDim() != 32 {
		t.Errorf("linear layer 1, lin 1/2/16/16/4: %v, linear %v %v, qkv %d (want 2·16 + 2·16 = 64), v dim %d (want 32)",
			err, c.isLinear(0), c.isLinear(1), c.LinQKV(), c.LinVDim())
	}

	c = cfg12()
	c.Vocab = 3
	if err := c.resolve(); err != nil {
		t.Fatalf("vocab 3: %v", err)
	}
	if c.HeadDim != 16 || c.QDim != 64 || c.KVDim != 32 || c.RotDim != 16 || c.RopeAttnFactor != 1 {
		t.Errorf("derived head_dim %d q_dim %d kv_dim %d rot_dim %d attn factor %g, want 16 64 32 16 1",
			c.HeadDim, c.QDim, c.KVDim, c.RotDim, c.RopeAttnFactor)
	}
	if len(c.LayerFlags) != 2 || c.LayerFlags[0] != 0 || c.LayerFlags[1] != 0 || c.isSliding(0) {
		t.Errorf("no window: flags %v, sliding %v, want [0 0] false", c.LayerFlags, c.isSliding(0))
	}

	for _, tc := range []struct{ f, want float32 }{{0, 1}, {0.5, 0.5}} {
		c := cfg12()
		c.RopeType, c.RopeAttnFactor = ropeYarn, tc.f
		if err := c.resolve(); err != nil {
			t.Fatal(err)
		}
		if f, want := tc.f, tc.want; c.RopeAttnFactor != want {
			t.Errorf("yarn attention factor %g resolves to %g, want %g", f, c.RopeAttnFactor, want)
		}
	}

	c = cfg12()
	c.SlidingWindow = 8
	if err := c.resolve(); err != nil {
		t.Fatal(err)
	}
	if c.LayerFlags[0] != flagSliding || c.LayerFlags[1] != flagSliding || !c.isSliding(1) {
		t.Errorf("window 8, no flags: %v, want every layer sliding", c.LayerFlags)
	}
	// A sliding flag without a window is not a sliding layer.
	c = Config{LayerFlags: []uint8{flagSliding}}
	if c.isSliding(0) {
		t.Error("flagSliding with window 0 is sliding")
	}
}
