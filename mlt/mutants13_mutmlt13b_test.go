package mlt

import "testing"

// TestCharBitsBoundaryBytes13: the scanners' character classes read the
// ASCII table only below utf8.RuneSelf; 0x80 (a lone continuation byte) and
// 0x7f sit on either side of that edge, and an invalid byte is U+FFFD of
// length 1. Each fast splitter must split strings made of them as the
// general path (regexp2 on the same string) does.
func TestCharBitsBoundaryBytes13(t *testing.T) {
	for re := range fastSplitters {
		for _, s := range []string{"\x80", "a\x80b", "\x7f\x80 \x80\x7f", "x \x80\x80 1\x80"} {
			checkSplitter(t, re, s)
		}
	}
	b, n := deepSeekBits.at("\x80", 0)
	if want := deepSeekBitsOf('\uFFFD'); b != want || n != 1 {
		t.Errorf("at(\"\\x80\") = %#x, %d; want U+FFFD's bits %#x, length 1", b, n, want)
	}
}

// TestCJKRangeEdges13: DeepSeek V3's CJK regex is [一-龥\u3040-ゟ゠-ヿ]
// (U+4E00..U+9FA5, U+3040..U+309F, U+30A0..U+30FF); its splitter must agree
// with the general path on each end of each range and the characters just
// outside (U+3040 is unassigned, but the class still includes it).
func TestCJKRangeEdges13(t *testing.T) {
	for _, r := range []rune{0x4DFF, 0x4E00, 0x9FA5, 0x9FA6, 0x303F, 0x3040, 0x309F, 0x30A0, 0x30FF, 0x3100} {
		for _, s := range []string{string(r), "a" + string(r) + "b", string(r) + string(r) + " x"} {
			checkSplitter(t, regexCJK, s)
		}
	}
}

// TestDeepSeekASCIIEdges13: the ASCII classes of DeepSeek V3's main regex
// ([A-Za-z] after one ASCII punctuation character, and that punctuation
// class itself) at each end of each range: the splitter must agree with the
// general path on the characters at and just outside a-z, A-Z, 0-9 and the
// printable range, each before letters that end in a non-ASCII one.
func TestDeepSeekASCIIEdges13(t *testing.T) {
	for _, c := range []byte{'a', 'z', 'A', 'Z', '@', '[', '`', '{', '0', '9', '/', ':', ' ', '!', '~', 0x7f} {
		ch := string(c)
		// ch + "aé": [punct][A-Za-z]+ stops before é, [^…]?[\p{L}\p{M}]+ takes it.
		for _, s := range []string{ch, "!" + ch, "!" + ch + ch + " x", "a" + ch + "b", ch + "!b", ". " + ch + "q", ch + "aé"} {
			checkSplitter(t, regexDeepSeekMain, s)
		}
	}
}
