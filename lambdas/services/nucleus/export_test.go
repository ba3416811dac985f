package nucleus

// SetPageLimit makes the executor read its queries in pages of n items, so
// tests cross page boundaries with a handful of items.
func (x *Executor) SetPageLimit(n int32) { x.store.pageLimit = n }
