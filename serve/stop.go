package serve

import "strings"

// stopper finds stop strings in generated text that arrives in pieces (one
// token's text at a time, each whole UTF-8 characters), holding back the end of
// the text while it may be the beginning of a stop string, so that no part of
// a stop string is ever sent, even one split across tokens.
type stopper struct {
	stops []string
	held  string
}

// add appends text and returns what can be sent now. With hit set a stop
// string was completed: out is the text before it, and the rest is dropped.
func (s *stopper) add(text string) (out string, hit bool) {
	s.held += text
	first := -1
	for _, st := range s.stops {
		if i := strings.Index(s.held, st); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first >= 0 {
		out, s.held = s.held[:first], ""
		return out, true
	}
	// Keep the longest end of the text that begins some stop string.
	keep := 0
	for _, st := range s.stops {
		for k := min(len(st)-1, len(s.held)); k > keep; k-- {
			if strings.HasSuffix(s.held, st[:k]) {
				keep = k
				break
			}
		}
	}
	cut := len(s.held) - keep
	out, s.held = s.held[:cut], s.held[cut:]
	return out, false
}

// flush returns the text held back, once no more text will come.
func (s *stopper) flush() string {
	out := s.held
	s.held = ""
	return out
}
