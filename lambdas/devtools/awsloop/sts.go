package awsloop

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// STS is a fake STS: AssumeRole and GetCallerIdentity. AssumeRole checks
// its parameters as the API reference constrains them, applies the trust
// registered with Trust (a role's required external id, or AccessDenied for
// a role nobody registered, unless TrustAll), and issues fresh temporary
// credentials per call. Session tells which role a returned access key id
// belongs to, so a test can prove that later calls were signed with them.
type STS struct {
	*Server
	mu       sync.Mutex
	all      bool
	denied   map[string]bool   // role ARN → refused even under TrustAll
	roles    map[string]string // role ARN → required external id ("" none)
	sessions map[string]Session
}

// Session is what one successful AssumeRole issued.
type Session struct {
	RoleARN         string
	RoleSessionName string
	ExternalID      string
	DurationSeconds int
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	Expiration      time.Time
	// CallerAccessKeyID signed the AssumeRole call.
	CallerAccessKeyID string
}

// NewSTS returns an STS fake (not started) that trusts nobody yet.
func NewSTS() *STS {
	s := &STS{Server: NewServer(STSService), roles: map[string]string{}, sessions: map[string]Session{}}
	s.Handle("AssumeRole", s.assumeRole)
	s.Handle("GetCallerIdentity", s.getCallerIdentity)
	return s
}

// Trust lets callers assume roleARN; with externalID != "", only when they
// pass that ExternalId (the sts:ExternalId condition of a trust policy).
func (s *STS) Trust(roleARN, externalID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.roles[roleARN] = externalID
}

// TrustAll lets callers assume any well-formed role ARN with any external
// id, for local development where roles are whatever a developer typed.
func (s *STS) TrustAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all = true
}

// Deny refuses AssumeRole of roleARN whatever Trust and TrustAll say: a
// target account whose role's trust policy no longer names the caller
// (the local runner's POST /_local/sts/deny).
func (s *STS) Deny(roleARN string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.denied == nil {
		s.denied = map[string]bool{}
	}
	s.denied[roleARN] = true
}

// Session returns the session that issued accessKeyID.
func (s *STS) Session(accessKeyID string) (Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.sessions[accessKeyID]
	return ss, ok
}

// Sessions returns every issued session, in no particular order.
func (s *STS) Sessions() []Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		out = append(out, ss)
	}
	return out
}

var (
	stsRoleARN     = regexp.MustCompile(`^arn:[\w-]+:iam::([0-9]{12}):role/(?:[\x21-\x7e]*/)?([\w+=,.@-]{1,64})$`)
	stsSessionName = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)
	stsExternalID  = regexp.MustCompile(`^[\w+=,.@:/-]+$`)
)

func stsValidation(value, member, constraint string) *Error {
	return ClientError("ValidationError", "1 validation error detected: Value '%s' at '%s' failed to satisfy constraint: %s", value, member, constraint)
}

type stsCredentials struct {
	AccessKeyID     string `xml:"AccessKeyId"`
	SecretAccessKey string `xml:"SecretAccessKey"`
	SessionToken    string `xml:"SessionToken"`
	Expiration      string `xml:"Expiration"`
}

type assumeRoleResult struct {
	Credentials     stsCredentials `xml:"Credentials"`
	AssumedRoleUser struct {
		AssumedRoleID string `xml:"AssumedRoleId"`
		Arn           string `xml:"Arn"`
	} `xml:"AssumedRoleUser"`
	PackedPolicySize int `xml:"PackedPolicySize"`
}

func (s *STS) assumeRole(c *Call) (any, error) {
	role, name, ext := c.Get("RoleArn"), c.Get("RoleSessionName"), c.Get("ExternalId")
	duration := 3600
	switch {
	case role == "":
		return nil, ClientError("MissingParameter", "The request must contain the parameter RoleArn")
	case name == "":
		return nil, ClientError("MissingParameter", "The request must contain the parameter RoleSessionName")
	case len(role) < 20 || len(role) > 2048:
		return nil, stsValidation(role, "roleArn", "Member must have length between 20 and 2048")
	case !stsSessionName.MatchString(name):
		return nil, stsValidation(name, "roleSessionName", `Member must satisfy regular expression pattern: [\w+=,.@-]* and have length between 2 and 64`)
	case c.Params.Has("ExternalId") && (len(ext) < 2 || len(ext) > 1224 || !stsExternalID.MatchString(ext)):
		return nil, stsValidation(ext, "externalId", `Member must satisfy regular expression pattern: [\w+=,.@:\/-]* and have length between 2 and 1224`)
	}
	if d := c.Get("DurationSeconds"); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n < 900 || n > 43200 {
			return nil, stsValidation(d, "durationSeconds", "Member must have value between 900 and 43200")
		}
		duration = n
	}
	m := stsRoleARN.FindStringSubmatch(role)
	s.mu.Lock()
	want, trusted := s.roles[role]
	all := s.all
	refused := s.denied[role]
	s.mu.Unlock()
	denied := m == nil || refused || !(all || trusted && want == ext)
	if denied {
		return nil, &Error{Status: http.StatusForbidden, Code: "AccessDenied",
			Message: fmt.Sprintf("User: %s is not authorized to perform: sts:AssumeRole on resource: %s", callerARN(c.AccessKeyID), role)}
	}
	ss := Session{RoleARN: role, RoleSessionName: name, ExternalID: ext, DurationSeconds: duration,
		AccessKeyID: "ASIA" + strings.ToUpper(randomHex(8)), SecretAccessKey: randomHex(20), SessionToken: "FQoGZXIvYXdzE" + randomHex(32),
		Expiration: time.Now().UTC().Add(time.Duration(duration) * time.Second).Truncate(time.Second), CallerAccessKeyID: c.AccessKeyID}
	s.mu.Lock()
	s.sessions[ss.AccessKeyID] = ss
	s.mu.Unlock()
	var out assumeRoleResult
	out.Credentials = stsCredentials{ss.AccessKeyID, ss.SecretAccessKey, ss.SessionToken, ss.Expiration.Format(time.RFC3339)}
	out.AssumedRoleUser.AssumedRoleID = "AROA" + strings.ToUpper(randomHex(8)) + ":" + name
	out.AssumedRoleUser.Arn = assumedRoleARN(m[1], m[2], name)
	return out, nil
}

type callerIdentityResult struct {
	UserID  string `xml:"UserId"`
	Account string `xml:"Account"`
	Arn     string `xml:"Arn"`
}

// getCallerIdentity answers for a session this fake issued with its
// assumed-role ARN; any other key is an IAM user of account 000000000000.
func (s *STS) getCallerIdentity(c *Call) (any, error) {
	ss, ok := s.Session(c.AccessKeyID)
	if !ok {
		return callerIdentityResult{UserID: c.AccessKeyID, Account: "000000000000", Arn: callerARN(c.AccessKeyID)}, nil
	}
	m := stsRoleARN.FindStringSubmatch(ss.RoleARN)
	return callerIdentityResult{UserID: "AROA:" + ss.RoleSessionName, Account: m[1], Arn: assumedRoleARN(m[1], m[2], ss.RoleSessionName)}, nil
}

func assumedRoleARN(account, role, session string) string {
	return "arn:aws:sts::" + account + ":assumed-role/" + role + "/" + session
}

func callerARN(accessKeyID string) string { return "arn:aws:iam::000000000000:user/" + accessKeyID }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Secrets knows the sessions this fake issued and, for any other key, the
// keys of Config: give it to the VerifySignatures of the servers the
// sessions call, so that their signatures prove the session's secret.
func (s *STS) Secrets(accessKeyID string) (string, string, bool) {
	if ss, ok := s.Session(accessKeyID); ok {
		return ss.SecretAccessKey, ss.SessionToken, true
	}
	return ConfigSecrets(accessKeyID)
}
