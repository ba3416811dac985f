package gofunction

// SingleBuilds reports how many packages were built on their own.
func SingleBuilds() int64 { return singleBuilds.Load() }
