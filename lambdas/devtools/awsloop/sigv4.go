package awsloop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Secrets finds the secret access key and session token of an access key
// id; ok is false for a key nobody issued.
type Secrets func(accessKeyID string) (secret, sessionToken string, ok bool)

// ConfigSecrets knows the keys of Config: the secret it derives from the
// access key id, no session token.
func ConfigSecrets(accessKeyID string) (string, string, bool) {
	return configSecret(accessKeyID), "", true
}

func configSecret(accessKeyID string) string { return "secret-of-" + accessKeyID }

// VerifySignatures makes the server check every request's SigV4 signature
// with the secret of the access key that claims to have signed it: a call
// signed with a key's id but another secret, or with a stale session token,
// is refused as AWS refuses it (403 SignatureDoesNotMatch). Without it the
// server only reads the Credential of the Authorization header.
func (s *Server) VerifySignatures(secrets Secrets) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets = secrets
}

// Credential is what a SigV4 Authorization header claims: the access key
// id and the rest of its credential scope, and the session token sent
// beside it.
type Credential struct {
	AccessKeyID, Region, Service, SessionToken string
}

// VerifyRequest checks r as an AWS endpoint of service checks any request,
// whatever its protocol (e.g. API Gateway's execute-api, which serves
// plain REST paths): an AWS4-HMAC-SHA256 Authorization header whose
// credential is scoped to service, and, with secrets, a signature that
// matches the one recomputed over the headers it names as signed. body is
// the request body as read from r. The error is an *Error as AWS would
// answer it (403 IncompleteSignature, SignatureDoesNotMatch, …).
func VerifyRequest(r *http.Request, body []byte, service string, secrets Secrets) (Credential, error) {
	s := &Server{svc: Service{Name: service, Protocol: AWSJSON11}, secrets: secrets}
	c := &Call{}
	if err := s.authenticate(c, r); err != nil {
		return Credential{}, err
	}
	cred := Credential{AccessKeyID: c.AccessKeyID, Region: c.Region, Service: c.SigningName, SessionToken: c.SessionToken}
	return cred, s.verify(c, r, body)
}

// verify recomputes the signature of r over the headers it names as
// signed, with the secret secrets gives for its key, and compares.
func (s *Server) verify(c *Call, r *http.Request, body []byte) error {
	s.mu.Lock()
	secrets := s.secrets
	s.mu.Unlock()
	if secrets == nil {
		return nil
	}
	secret, token, ok := secrets(c.AccessKeyID)
	if !ok {
		return &Error{Status: http.StatusForbidden, Code: "InvalidClientTokenId", Message: "The security token included in the request is invalid."}
	}
	signedHeaders, signature := "", ""
	_, params, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	for part := range strings.SplitSeq(params, ",") {
		part = strings.TrimSpace(part)
		if v, ok := strings.CutPrefix(part, "SignedHeaders="); ok {
			signedHeaders = v
		}
		if v, ok := strings.CutPrefix(part, "Signature="); ok {
			signature = v
		}
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil || signedHeaders == "" || signature == "" {
		return &Error{Status: http.StatusForbidden, Code: "IncompleteSignature", Message: "Authorization needs SignedHeaders and Signature, and X-Amz-Date"}
	}
	// The request as the client signed it: only its signed headers (a
	// transport may add others after signing).
	clone, err := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	for _, h := range strings.Split(signedHeaders, ";") {
		switch h {
		case "host":
		case "content-length":
			clone.ContentLength = r.ContentLength
		default:
			clone.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	if !strings.Contains(";"+signedHeaders+";", ";content-length;") {
		clone.ContentLength = 0
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: secret, SessionToken: token}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, clone, hex.EncodeToString(sum[:]), c.SigningName, c.Region, at); err != nil {
		return err
	}
	_, want, _ := strings.Cut(clone.Header.Get("Authorization"), "Signature=")
	if want != signature {
		return &Error{Status: http.StatusForbidden, Code: "SignatureDoesNotMatch",
			Message: "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method."}
	}
	return nil
}
