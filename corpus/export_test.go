package corpus

// SetMaxLineBytes sets the line limit for a test and returns the undo.
func SetMaxLineBytes(n int) func() {
	old := maxLineBytes
	maxLineBytes = n
	return func() { maxLineBytes = old }
}
