// Package api holds what every dynastack HTTP service shares: one JSON error
// shape, strict JSON request decoding, field validation, path-id, page-limit
// and optional-field helpers with one wording, a router whose 404 and 405
// answers use that error shape, and the request-id/logging/recovery
// middleware.
//
// Handlers are plain net/http. A handler of this package returns an error
// instead of writing one, so each failure is mapped to a status code in one
// place ([ErrorFor], used by [WriteError]) and internals never leak into a
// response. Domain errors carry their own answer ([Coded], usually a [Kind]
// declared next to the failure), so services keep no translation switch;
// a handler adds only what the domain does not know: the id the path named
// ([About]) and what a listing's cursor must come with ([CursorHint]).
//
// What belongs here: everything between API Gateway's request and the
// service's domain call — the router registered against a contract (path
// parameters checked as keys by platform/ids' rule, query parameters read
// by the contract's constants), decoding and validation, the one mapping
// of errors to answers, the request-id, logging and recovery middleware,
// and Idempotency-Key ([IdempotencyTable]) on the routes a contract marks
// idempotent. Running the handler in Lambda is platform/fn's.
package api
