package lexical

// topK selects the best rows of a query: a heap of at most k entries whose
// root is the worst kept, ordered by float32 score, then row.
type topK struct {
	rows   []int32
	scores []float32
}

// worse reports whether (s1, r1) ranks below (s2, r2): a lower score, or an
// equal score and a higher row.
func worse(s1 float32, r1 int32, s2 float32, r2 int32) bool {
	return s1 < s2 || (s1 == s2 && r1 > r2)
}

// top writes the k best of the touched rows, by acc, into rows and scores
// (already -1 and 0), best first.
func (h *topK) top(acc []float64, touched []int32, k int, rows []int32, scores []float32) {
	h.rows, h.scores = h.rows[:0], h.scores[:0]
	for _, r := range touched {
		s := float32(acc[r])
		if len(h.rows) < k {
			h.rows, h.scores = append(h.rows, r), append(h.scores, s)
			h.up(len(h.rows) - 1)
		} else if worse(h.scores[0], h.rows[0], s, r) {
			h.rows[0], h.scores[0] = r, s
			h.down(0, len(h.rows))
		}
	}
	for n := len(h.rows); n > 0; n-- { // pop the worst into the last free slot
		rows[n-1], scores[n-1] = h.rows[0], h.scores[0]
		h.swap(0, n-1)
		h.down(0, n-1)
	}
}

func (h *topK) swap(i, j int) {
	h.rows[i], h.rows[j] = h.rows[j], h.rows[i]
	h.scores[i], h.scores[j] = h.scores[j], h.scores[i]
}

func (h *topK) less(i, j int) bool { return worse(h.scores[i], h.rows[i], h.scores[j], h.rows[j]) }

func (h *topK) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

func (h *topK) down(i, n int) {
	for {
		j := 2*i + 1
		if j >= n {
			return
		}
		if j+1 < n && h.less(j+1, j) {
			j++
		}
		if !h.less(j, i) {
			return
		}
		h.swap(i, j)
		i = j
	}
}
