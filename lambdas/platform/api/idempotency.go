// Idempotency keys make a create safe for a client to retry: a request
// with an Idempotency-Key header is served once, and a retry with the same
// key (its answer lost, a timeout, a dropped connection) gets the first
// answer again instead of a second ticket, message or project. The design
// is AWS Lambda Powertools' idempotency utility's: a persistence record
// per key, written in progress before the handler runs and completed with
// its answer after.
//
//   - The same key with the same request (method, path, body) answers the
//     first request's status and body, with Idempotent-Replayed: true. An
//     answer over 300 KB is kept gzipped; one too large to keep even so
//     (no single item's answer is: DynamoDB's items are at most 400 KB)
//     is never run again either: its retry is 409 conflict with the first
//     answer's Location.
//   - The same key with another request is 422 idempotency_key_reused:
//     a client bug, never served. The body is compared byte for byte (the
//     same JSON re-encoded with other spacing or key order is another
//     request), and a record is per caller, method and concrete path: the
//     key on another path (another project's events) is a new request,
//     never a 422.
//   - A key is the caller's as the gateway names it: the IAM ARN, which
//     for an assumed role includes the session name. A retry under another
//     role session (the AWS CLI's and botocore's default session names
//     change with each process) is another caller and runs again; clients
//     that retry across processes give their role sessions a fixed name.
//   - An Idempotency-Key header that is empty counts as none: the request
//     runs without a key.
//   - The same key while the first request still runs is 409 in_progress
//     with Retry-After: concurrent retries create once.
//   - Only a success (an answer below 400) is kept, even when the handler
//     panics after answering it. A first request that was refused (a 4xx:
//     by the API's rules a refusal changed nothing) or failed (a 5xx, a
//     panic before any answer) releases its key, so the retry runs: a
//     409 "a concurrent request changed the same items; retry" or a 429
//     is not answered again for a day, and a client that fixes the body a
//     400 refused may send it with the same key. One that never answered
//     (a timeout) holds the key until InProgressMargin after its
//     deadline; keys of answered requests last IdempotencyWindow.
//   - Should DynamoDB fail the record's completion after the SDK's
//     retries, the answer still goes out and the key is held as for a
//     timeout, then a retry runs again: only a client that also lost that
//     answer creates twice.
//
// The record lives in the service's own table (no other table to deploy
// and grant): partition key "idempotency#<route>#<SHA-256 of caller,
// method, path and key>", which no listing
// reads, the sort key "idempotency" where the table has one, and the
// table's TTL attribute where it has one. It needs only PutItem and
// UpdateItem, which every API function is granted.

package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/dynastack/dynastack/constructs/service"
	"github.com/dynastack/dynastack/lambdas/platform/ddb"
)

// IdempotencyHeader is the request header carrying the client's key.
const IdempotencyHeader = "Idempotency-Key"

// Limits.
const (
	// IdempotencyWindow is how long a completed request's key is remembered.
	IdempotencyWindow = 24 * time.Hour
	// InProgressMargin is how long after its invocation's deadline a request
	// still running holds its key. An invocation that ends without
	// answering (a Lambda timeout, an out-of-memory end) cannot release it,
	// so its record expires then by itself, as Powertools' in-progress
	// expiry does, and the client's retry runs instead of answering 409
	// for the rest of the window.
	InProgressMargin = 5 * time.Second
	// MaxInProgress bounds a request's hold on its key when its context has
	// no deadline (Lambda always gives one): no API invocation outlives API
	// Gateway's 30-second integration timeout.
	MaxInProgress = 30 * time.Second
	// MaxIdempotencyKeyLen bounds a key (a UUID is 36).
	MaxIdempotencyKeyLen = 128
	// maxBody is the most of a request body hashed; a larger body is
	// refused by every service first anyway.
	maxBody = 1 << 20
	// maxAnswer is the largest answer stored for a replay as it is; a
	// larger one is stored gzipped, if that is at most maxKept. An answer
	// larger even so (or that would still outgrow DynamoDB's 400 KB item)
	// keeps the key without its body: a retry is refused (409), never run
	// again. No single item's answer gets there: an item is at most 400 KB.
	maxAnswer = 300 << 10
	maxKept   = 360 << 10
)

// Error codes of the answers this package writes.
const (
	CodeKeyReused  = "idempotency_key_reused"
	CodeInProgress = "in_progress"
)

// IdempotencyTable is where a service keeps its keys: its own table.
type IdempotencyTable struct {
	Client ddb.API
	// Name is the table's physical name.
	Name string
	// PartitionKey and SortKey are the table's key attribute names
	// (SortKey "" for a table without one); TTL its TTL attribute, or "".
	PartitionKey, SortKey, TTL string
	// Now defaults to time.Now.
	Now func() time.Time
}

type record struct {
	Status   string `dynamodbav:"idem_status"`
	Hash     string `dynamodbav:"idem_hash"`
	Token    string `dynamodbav:"idem_token"`
	Expires  int64  `dynamodbav:"idem_expires"`
	Answer   int    `dynamodbav:"idem_answer_status,omitempty"`
	Body     []byte `dynamodbav:"idem_answer_body,omitempty"`
	Location string `dynamodbav:"idem_answer_location,omitempty"`
	// Redacted names the answer's fields not stored (Secret).
	Redacted []string `dynamodbav:"idem_answer_redacted,omitempty,stringset"`
	// Encoding is "gzip" when Body is gzipped (an answer over maxAnswer).
	Encoding string `dynamodbav:"idem_answer_encoding,omitempty"`
	// Unkept: the answer was too large to keep; Body is empty.
	Unkept bool `dynamodbav:"idem_answer_unkept,omitempty"`
}

const (
	inProgress = "in_progress"
	completed  = "completed"
)

// Middleware serves route once per key when the contract marks it
// Idempotent, and passes any other route (or a request without a key) as
// it is. It is the api.Router's Around hook.
func (t IdempotencyTable) Middleware(route service.Route, next http.Handler) http.Handler {
	if !route.Idempotent {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(IdempotencyHeader)
		if key == "" {
			next.ServeHTTP(w, r)
			return
		}
		if !validKey(key) {
			WriteError(w, r, BadRequest("%s must be 1 to %d printable ASCII characters, e.g. a UUID", IdempotencyHeader, MaxIdempotencyKeyLen))
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil || len(body) > maxBody {
			WriteError(w, r, &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge, Message: "request body too large"})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sum := sha256.Sum256([]byte(r.Method + " " + r.URL.Path + "\n" + string(body)))
		hash := hex.EncodeToString(sum[:])
		id := recordID(r, route, key)
		token := uuid.NewString()
		prev, err := t.begin(r.Context(), id, hash, token)
		if err != nil {
			WriteError(w, r, err)
			return
		}
		if prev != nil {
			answerAgain(w, r, prev, hash)
			return
		}
		rec := &keptAnswer{ResponseWriter: w, status: http.StatusOK}
		ctx := context.WithoutCancel(r.Context())
		func() {
			// A panic before any answer answers 500 (the router's
			// recovery) and must let the retry run, as a 5xx does; one
			// after a success answered (the recovery keeps that answer)
			// did its work, which the key keeps as for any success. The
			// panic goes on to the recovery.
			defer func() {
				if p := recover(); p != nil {
					if rec.wrote && rec.status < 400 {
						err = t.complete(ctx, id, token, rec)
					} else {
						err = t.release(ctx, id, token)
					}
					if err != nil {
						Logger(ctx).WarnContext(ctx, "idempotency record not updated after a panic", "error", err.Error())
					}
					panic(p)
				}
			}()
			next.ServeHTTP(rec, r)
		}()
		// Only a success is kept: a refusal changed nothing, and a 409
		// of a concurrent change or a 429 asks for the retry that a kept
		// answer would refuse for the whole window.
		if rec.status >= 400 {
			err = t.release(ctx, id, token)
		} else {
			err = t.complete(ctx, id, token, rec)
		}
		if err != nil {
			Logger( // The answer went out; the key only fails to remember it, and a
				// retry waits for the record to expire.
				r.Context()).WarnContext(r.Context(), "idempotency record not updated", "error", err.Error())
		}
	})
}

// answerAgain answers a request whose key is taken.
func answerAgain(w http.ResponseWriter, r *http.Request, prev *record, hash string) {
	switch {
	case prev.Hash != hash:
		WriteError(w, r, &Error{Status: http.StatusUnprocessableEntity, Code: CodeKeyReused,
			Message: IdempotencyHeader + " was used for another request (method, path or body); use a new key for a new request"})
	case prev.Status != completed:
		w.Header().Set("Retry-After", "1")
		WriteError(w, r, &Error{Status: http.StatusConflict, Code: CodeInProgress,
			Message: "the first request with this " + IdempotencyHeader + " is still running; retry after the Retry-After header's seconds"})
	case prev.Unkept:
		// The first request succeeded; running it again would do it twice.
		if prev.Location != "" {
			w.Header().Set("Location", prev.Location)
		}
		WriteError(w, r, &Error{Status: http.StatusConflict, Code: CodeConflict,
			Message: fmt.Sprintf("the first request with this %s succeeded (%d) and is not run again, but its answer was too large to keep for a replay; read what it created instead (the Location header, where there is one)", IdempotencyHeader, prev.Answer)})
	default:
		body := prev.Body
		if prev.Encoding == "gzip" {
			var err error
			if body, err = gunzip(body); err != nil {
				WriteError(w, r, fmt.Errorf("idempotency: stored answer: %w", err))
				return
			}
		}
		if prev.Location != "" {
			w.Header().Set("Location", prev.Location)
		}
		w.Header().Set("Idempotent-Replayed", "true")
		if len(prev.Redacted) > 0 {
			w.Header().Set(RedactedHeader, strings.Join(prev.Redacted, ", "))
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(prev.Answer)
		_, _ = w.Write(body)
	}
}

func (t IdempotencyTable) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t IdempotencyTable) key(id string) map[string]types.AttributeValue {
	k := map[string]types.AttributeValue{t.PartitionKey: &types.AttributeValueMemberS{Value: id}}
	if t.SortKey != "" {
		k[t.SortKey] = &types.AttributeValueMemberS{Value: "idempotency"}
	}
	return k
}

// begin writes the record in progress, unless a live one holds the key:
// then it returns that one. A record holding this request's own token is
// its own earlier attempt (the answer to the Put was lost), and begins.
// The record in progress expires InProgressMargin after the invocation's
// deadline (complete extends it to the window).
func (t IdempotencyTable) begin(ctx context.Context, id, hash, token string) (*record, error) {
	now := t.now()
	until := now.Add(MaxInProgress)
	if d, ok := ctx.Deadline(); ok && d.Before(until) {
		until = d
	}
	item, err := attributevalue.MarshalMap(record{Status: inProgress, Hash: hash, Token: token, Expires: until.Add(InProgressMargin).Unix()})
	if err != nil {
		return nil, fmt.Errorf("idempotency: marshal record: %w", err)
	}
	for k, v := range t.key(id) {
		item[k] = v
	}
	if t.TTL != "" {
		item[t.TTL] = &types.AttributeValueMemberN{Value: strconv.FormatInt(now.Add(IdempotencyWindow).Unix(), 10)}
	}
	// No record, or an expired one.
	put := ddb.Expr{
		Condition: "attribute_not_exists(#pk) OR #expires < :now",
		Names:     map[string]string{"#pk": t.PartitionKey, "#expires": "idem_expires"},
		Values:    map[string]types.AttributeValue{":now": ddb.N(now.Unix())},
	}.Put(t.Name, item)
	put.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	_, err = t.Client.PutItem(ctx, put)
	if err == nil {
		return nil, nil
	}
	var prev record
	if found, uerr := ddb.OldItem(err, &prev); uerr != nil {
		return nil, uerr
	} else if found {
		if prev.Token == token {
			return nil, nil
		}
		return &prev, nil
	}
	return nil, ddb.Wrap("PutItem", err)
}

// complete stores the answer for replays, without its secret fields, and
// keeps it for the window, or until the data it describes expires
// (Expires) if that is sooner. An answer over maxAnswer is stored
// gzipped; one too large even so, or whose record DynamoDB refuses as
// over its item limit, is completed without its body (unkept), so the
// key is never released for a retry to run again.
func (t IdempotencyTable) complete(ctx context.Context, id, token string, rec *keptAnswer) error {
	body, err := redact(rec.body.Bytes(), rec.secret)
	if err != nil {
		return err
	}
	encoding := ""
	if len(body) > maxAnswer {
		if body, err = gzipped(body); err != nil {
			return err
		}
		encoding = "gzip"
	}
	if len(body) > maxKept {
		return t.update(ctx, id, token, t.completion(rec, nil, "", true))
	}
	err = t.update(ctx, id, token, t.completion(rec, body, encoding, false))
	if errors.Is(err, ddb.ErrItemTooLarge) {
		return t.update(ctx, id, token, t.completion(rec, nil, "", true))
	}
	return err
}

// completion is complete's update: the answer's status and body, or
// without a body, marked unkept.
func (t IdempotencyTable) completion(rec *keptAnswer, body []byte, encoding string, unkept bool) ddb.Expr {
	expires := t.now().Add(IdempotencyWindow)
	if !rec.expires.IsZero() && rec.expires.Before(expires) {
		expires = rec.expires
	}
	e := ddb.Expr{
		Update: "SET #status = :status, #answer = :answer, #expires = :expires",
		Names:  map[string]string{"#status": "idem_status", "#answer": "idem_answer_status", "#expires": "idem_expires"},
		Values: map[string]types.AttributeValue{":status": ddb.S(completed), ":answer": ddb.N(rec.status),
			":expires": ddb.N(expires.Unix())},
	}
	if unkept {
		e.Update += ", #unkept = :unkept"
		e.Names["#unkept"], e.Values[":unkept"] = "idem_answer_unkept", &types.AttributeValueMemberBOOL{Value: true}
	} else {
		e.Update += ", #body = :body"
		e.Names["#body"], e.Values[":body"] = "idem_answer_body", ddb.B(body)
	}
	if encoding != "" {
		e.Update += ", #encoding = :encoding"
		e.Names["#encoding"], e.Values[":encoding"] = "idem_answer_encoding", ddb.S(encoding)
	}
	if t.TTL != "" {
		e.Update += ", #ttl = :expires"
		e.Names["#ttl"] = t.TTL
	}
	if len(rec.secret) > 0 {
		e.Update += ", #redacted = :redacted"
		e.Names["#redacted"], e.Values[":redacted"] = "idem_answer_redacted", &types.AttributeValueMemberSS{Value: rec.secret}
	}
	if loc := rec.Header().Get("Location"); loc != "" {
		e.Update += ", #location = :location"
		e.Names["#location"], e.Values[":location"] = "idem_answer_location", ddb.S(loc)
	}
	return e
}

func gzipped(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	z := gzip.NewWriter(&buf)
	if _, err := z.Write(b); err != nil {
		return nil, err
	}
	if err := z.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func gunzip(b []byte) ([]byte, error) {
	z, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(z)
}

// release lets a retry run again after a refused or failed first request.
func (t IdempotencyTable) release(ctx context.Context, id, token string) error {
	return t.update(ctx, id, token, ddb.Expr{Update: "SET #expires = :expired",
		Names:  map[string]string{"#expires": "idem_expires"},
		Values: map[string]types.AttributeValue{":expired": ddb.N(t.now().Unix() - 1)}})
}

// update runs e's update if the record still holds token.
func (t IdempotencyTable) update(ctx context.Context, id, token string, e ddb.Expr) error {
	e.Condition = "#token = :token"
	e.Names["#token"], e.Values[":token"] = "idem_token", ddb.S(token)
	_, err := ddb.UpdateExpr(ctx, t.Client, t.Name, t.key(id), e)
	return err
}

func validKey(k string) bool {
	if len(k) > MaxIdempotencyKeyLen {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// keptAnswer passes the answer through and keeps a copy.
type keptAnswer struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	wrote  bool
	// secret are the answer's top-level fields a replay must not show.
	secret []string
	// expires is when the data the answer describes expires (Expires);
	// zero when it does not.
	expires time.Time
}

func (r *keptAnswer) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *keptAnswer) Write(b []byte) (int, error) {
	r.wrote = true
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// RedactedHeader names, on a replayed answer, the fields the first answer
// had and the replay leaves out (Secret).
const RedactedHeader = "Idempotent-Redacted"

// Secret marks top-level fields of the JSON object a handler is about to
// answer as secrets that an idempotent replay must not show (Nucleus's
// generated external id, shown once): the stored answer leaves them out,
// and a replay names them in Idempotent-Redacted, so a client that lost
// the first answer knows to rotate the secret rather than read it again.
// On a route without Idempotency-Key it does nothing.
func Secret(w http.ResponseWriter, fields ...string) {
	if k, ok := w.(*keptAnswer); ok {
		k.secret = append(k.secret, fields...)
	}
}

// Expires says that the answer a handler is about to write describes data
// that expires at t (its TTL: a Stak message, say). The stored answer is
// kept until then at most, not the whole IdempotencyWindow, so a replay
// never answers for data that is gone: a retry after t is a new request.
func Expires(w http.ResponseWriter, t time.Time) {
	if k, ok := w.(*keptAnswer); ok && (k.expires.IsZero() || t.Before(k.expires)) {
		k.expires = t
	}
}

// redact removes fields from the JSON object body.
func redact(body []byte, fields []string) ([]byte, error) {
	if len(fields) == 0 {
		return body, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, fmt.Errorf("idempotency: answer with secret fields is not a JSON object: %w", err)
	}
	for _, f := range fields {
		delete(obj, f)
	}
	return json.Marshal(obj)
}

// recordID names a request's record: who asked (the IAM principal, or the
// token's issuer and subject), the concrete path and the key, hashed. A
// different caller with the same key is a different request, never a
// replay of another's answer nor a 422 that reveals another's key; the
// route stays readable in the id for an operator.
func recordID(r *http.Request, route service.Route, key string) string {
	caller := "anonymous"
	if c, ok := CallerFrom(r.Context()); ok {
		switch {
		case c.IAM != "":
			caller = "iam\x00" + c.IAM
		case c.Subject != "":
			caller = "jwt\x00" + c.Claims["iss"] + "\x00" + c.Subject
		}
	}
	sum := sha256.Sum256([]byte(caller + "\x00" + r.Method + " " + r.URL.Path + "\x00" + key))
	return "idempotency#" + route.Key() + "#" + hex.EncodeToString(sum[:])
}
