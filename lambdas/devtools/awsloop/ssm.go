package awsloop

import (
	"fmt"
	"sync"
)

// SSM is a fake Parameter Store serving GetParameter. SecureString values
// come back only with WithDecryption, as AWS returns them.
type SSM struct {
	*Server
	mu     sync.Mutex
	params map[string]ssmParameter
}

type ssmParameter struct{ value, typ string }

// NewSSM returns an SSM fake (not started) without parameters.
func NewSSM() *SSM {
	s := &SSM{Server: NewServer(SSMService), params: map[string]ssmParameter{}}
	s.Handle("GetParameter", s.getParameter)
	return s
}

// PutSecureString stores a SecureString parameter.
func (s *SSM) PutSecureString(name, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.params[name] = ssmParameter{value: value, typ: "SecureString"}
}

func (s *SSM) getParameter(c *Call) (any, error) {
	var in struct {
		Name           string
		WithDecryption bool
	}
	if err := c.Decode(&in); err != nil {
		return nil, ClientError("ValidationException", "malformed request: %v", err)
	}
	if in.Name == "" {
		return nil, ClientError("ValidationException", "1 validation error detected: Value null at 'name' failed to satisfy constraint: Member must not be null")
	}
	s.mu.Lock()
	p, ok := s.params[in.Name]
	s.mu.Unlock()
	if !ok {
		return nil, ClientError("ParameterNotFound", "")
	}
	value := p.value
	if p.typ == "SecureString" && !in.WithDecryption {
		value = fmt.Sprintf("encrypted:%x", len(p.value)) // ciphertext stands in: not the value
	}
	return map[string]any{"Parameter": map[string]any{
		"Name": in.Name, "Type": p.typ, "Value": value, "Version": 1,
		"ARN": "arn:aws:ssm:" + Region + ":000000000000:parameter" + in.Name, "DataType": "text",
	}}, nil
}
