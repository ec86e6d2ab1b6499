package mlt

// addedMatcher finds added tokens in raw text: at a position, the longest
// added token starting there (Hugging Face matches added tokens leftmost-longest
// with Aho-Corasick; scanning left to right and taking the longest match at the
// first position that has one gives the same result).
type addedMatcher struct {
	first [256]bool        // bytes that start some added token
	edges map[uint64]int32 // node<<8 | byte → child node
	id    []int32          // node → token id ending there, -1 if none
	count int
}

func newAddedMatcher(toks []Token) addedMatcher {
	m := addedMatcher{edges: map[uint64]int32{}, id: []int32{-1}}
	for id, tok := range toks {
		if tok.Attr != AttrAdded || len(tok.Bytes) == 0 {
			continue
		}
		m.count++
		m.first[tok.Bytes[0]] = true
		node := int32(0)
		for _, c := range tok.Bytes {
			k := uint64(node)<<8 | uint64(c)
			next, ok := m.edges[k]
			if !ok {
				next = int32(len(m.id))
				m.id = append(m.id, -1)
				m.edges[k] = next
			}
			node = next
		}
		m.id[node] = int32(id)
	}
	return m
}

// match returns the id and length of the longest added token that starts
// text, or (-1, 0).
func (m *addedMatcher) match(text string) (id, n int) {
	id = -1
	node := int32(0)
	for i := 0; i < len(text); i++ {
		next, ok := m.edges[uint64(node)<<8|uint64(text[i])]
		if !ok {
			break
		}
		node = next
		if m.id[node] >= 0 {
			id, n = int(m.id[node]), i+1
		}
	}
	return id, n
}
