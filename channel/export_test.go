package channel

// SetTopWork sets the work of one of Top's blocks for a test and returns
// what restores it.
func SetTopWork(n int) (restore func()) {
	old := topWork
	topWork = n
	return func() { topWork = old }
}
