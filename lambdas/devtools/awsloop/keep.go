package awsloop

// DefaultKeep is how many recorded calls a fake Server, and how many
// accepted events the Events fake, keep: the newest ones. The local runner
// lives as long as a developer's session, and every rez_agent message is a
// Publish (about 3 KB recorded); a test that makes more calls and reads
// them all raises it with SetKeep.
const DefaultKeep = 1000

// keepNewest appends v to s and drops the oldest elements beyond n (n <=
// 0 keeps DefaultKeep). The slice is compacted only when it reaches twice
// n, so an append costs O(1) amortized.
func keepNewest[T any](s []T, v T, n int) []T {
	if n <= 0 {
		n = DefaultKeep
	}
	s = append(s, v)
	if len(s) >= 2*n {
		s = append(s[:0:0], s[len(s)-n:]...)
	}
	return s
}

// newest returns the newest n elements of s (a copy).
func newest[T any](s []T, n int) []T {
	if n <= 0 {
		n = DefaultKeep
	}
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return append([]T(nil), s...)
}
