package faiss

import "fmt"

// Metric is the similarity an index ranks by.
type Metric int

const (
	// InnerProduct ranks by the dot product, largest first. With normalised
	// vectors it is cosine similarity. It is the zero value.
	InnerProduct Metric = 0
	// L2 ranks by squared Euclidean distance, smallest first.
	L2 Metric = 1
)

// String returns "ip", "l2", or "metric(N)" for another FAISS metric found in
// a file read from disk.
func (m Metric) String() string {
	switch m {
	case InnerProduct:
		return "ip"
	case L2:
		return "l2"
	}
	return fmt.Sprintf("metric(%d)", int(m))
}
