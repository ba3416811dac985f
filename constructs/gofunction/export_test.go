package gofunction

// SingleBuilds reports how many packages were built on their own.
func SingleBuilds() int64 { return singleBuilds.Load() }

// Bundles reports how many bootstraps were copied into a bundling folder.
func Bundles() int64 { return bundles.Load() }

// ForgetBuilds empties the per-process memo of builds, as a new synth
// process starts.
func ForgetBuilds() {
	built.Clear()
	batchesMu.Lock()
	clear(batches)
	batchesMu.Unlock()
}
