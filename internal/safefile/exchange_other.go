//go:build !linux

package safefile

// exchange is not offered outside Linux: replacements take two renames.
func exchange(a, b string) error { return errNoExchange }
