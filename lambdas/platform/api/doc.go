// Package api holds what every dynastack HTTP service shares: one JSON error
// shape, strict JSON request decoding, field validation, a router whose 404
// and 405 answers use that error shape, and the request-id/logging/recovery
// middleware.
//
// Handlers are plain net/http. A handler of this package returns an error
// instead of writing one, so each failure is mapped to a status code in one
// place ([WriteError]) and internals never leak into a response.
package api
