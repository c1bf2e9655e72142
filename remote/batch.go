package remote

// span is a run of texts [lo, hi) sent in one request, with their UTF-8 bytes.
type span struct{ lo, hi, bytes int }

// planBatches cuts texts, in order, into runs of at most maxTexts texts and
// maxBytes bytes. A text of more than maxBytes bytes goes alone: the server,
// not the client, decides whether it is too long.
func planBatches(texts []string, maxTexts, maxBytes int) []span {
	var out []span
	cur := span{}
	for i, t := range texts {
		n := len(t)
		if cur.hi > cur.lo && (cur.hi-cur.lo >= maxTexts || cur.bytes+n > maxBytes) {
			out = append(out, cur)
			cur = span{lo: i, hi: i}
		}
		cur.hi, cur.bytes = i+1, cur.bytes+n
	}
	if cur.hi > cur.lo {
		out = append(out, cur)
	}
	return out
}
