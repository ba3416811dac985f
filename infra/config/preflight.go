package config

import (
	"fmt"
	"net/mail"
	"net/url"
	"regexp"
	"strings"

	"github.com/dynastack/dynastack/constructs/table"
)

var (
	accountID = regexp.MustCompile(`^[0-9]{12}$`)
)

// DeployProblems lists every setting of the stage that is still a
// placeholder or missing for a real deploy, one line each naming where to
// set it (and never a value that may be a secret). The committed stages synthesize with these placeholders on
// purpose (synth and tests run offline, without anyone's account); a
// deploy refuses them (infra/synth.Preflight, docs/stage-policy.md). dev
// has none: it deploys with the local defaults.
func (s Stage) DeployProblems() []string {
	if s.Name == table.Dev {
		return nil
	}
	var out []string
	add := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("stage %s: ", s.Name)+fmt.Sprintf(format, args...))
	}
	where := fmt.Sprintf("in infra/config/config.go (Stages(), stage %s", s.Name)
	// Each service deploys where PlacementOf says: the stage's Account
	// and Region, or its own entry in Services.
	var noAccount, noRegion []string
	for _, svc := range serviceNames() {
		p := s.PlacementOf(svc)
		if p.Account == "" {
			noAccount = append(noAccount, svc)
		}
		if p.Region == "" {
			noRegion = append(noRegion, svc)
		}
	}
	all := len(serviceNames())
	switch {
	case len(noAccount) == all:
		add("Account is not set, so the deploy lands in whichever account the credentials reach: pin the stage's 12-digit AWS account id %s, Account)", where)
	case len(noAccount) > 0:
		add("Account is not set for %s, so their stacks land in whichever account the credentials reach: pin the stage's account %s, Account) or each service's (Services[...].Account)", strings.Join(noAccount, ", "), where)
	case s.Account != "" && !accountID.MatchString(s.Account):
		add("Account %q is not a 12-digit AWS account id: set the stage's account %s, Account)", s.Account, where)
	}
	switch {
	case len(noRegion) == all:
		add("Region is not set, so the deploy lands in the credentials' default Region: pin it (e.g. us-east-1) %s, Region)", where)
	case len(noRegion) > 0:
		add("Region is not set for %s, so their stacks land in the credentials' default Region: pin the stage's Region %s, Region) or each service's (Services[...].Region)", strings.Join(noRegion, ", "), where)
	case s.Region != "" && !RegionInPartition(s.Region, s.PartitionOf()):
		add("Region %q is not an AWS Region name of partition %s: set one such as us-east-1 %s, Region)", s.Region, s.PartitionOf(), where)
	}
	tokens, _ := s.StakTokensFor()
	if s.StakTokens.Issuer == "" || placeholderURL(tokens.Issuer) {
		add("StakTokens.Issuer is the placeholder %s: set the issuer URL of the stage's identity provider, exactly as its tokens spell iss, %s, StakTokens.Issuer)", tokens.Issuer, where)
	}
	if s.StakTokens.Audience == "" {
		add("StakTokens.Audience is the default %s, which no identity provider was asked to issue: set the client id (or API identifier) the provider puts in aud for Stak's front ends %s, StakTokens.Audience)", tokens.Audience, where)
	}
	for _, e := range s.Alarms.Emails {
		if addr, err := mail.ParseAddress(e); err == nil && placeholderHost(addr.Address[strings.LastIndex(addr.Address, "@")+1:]) {
			add("alarm email %s is a placeholder (its domain never delivers): set the on-call address %s, Alarms.Emails; config.OnCallEmail)", e, where)
		}
	}
	for i, u := range s.Alarms.HTTPSEndpoints {
		if placeholderURL(u) {
			add("alarm endpoint %s is a placeholder: set the chat or paging webhook %s, Alarms.HTTPSEndpoints[%d]; a webhook whose URL is its secret goes in Alarms.HTTPSEndpointSecrets)", strings.Trim(showURL(u), `"`), where, i)
		}
	}
	p := s.RezAgent.WithDefaults(string(s.Name))
	switch {
	case s.RezAgent.NtfyURL == "":
		add("RezAgent.NtfyURL is unset, so notifications go to the public server %s: set the stage's ntfy server (https://ntfy.sh only on purpose) %s, RezAgent.NtfyURL)", p.NtfyURL, where)
	case placeholderURL(p.NtfyURL):
		add("RezAgent.NtfyURL %s is a placeholder: set the stage's ntfy server %s, RezAgent.NtfyURL)", p.NtfyURL, where)
	}
	// The token is what protects the topic: a topic name is no secret (it
	// is committed here, copied into the template and the processor's
	// environment), so an "unguessable" topic is refused as the remedy.
	tokenFix := fmt.Sprintf("create an ntfy access token with write access to the topic, store it as an SSM SecureString (aws ssm put-parameter --type SecureString --name /rez-agent/%s/ntfy-token --value tk_…) and name the parameter %s, RezAgent.NtfyTokenParameter), and have the server refuse anonymous access to the topic (a reserved topic on ntfy.sh, auth-default-access deny-all on a server of your own)", s.Name, where)
	switch {
	case s.RezAgent.NtfyTokenParameter != "":
	case s.RezAgent.NtfyTopic == "":
		add("RezAgent.NtfyTokenParameter is unset, so anyone who knows the default topic %s can read and post the stage's notifications: %s", p.NtfyTopic, tokenFix)
	default:
		add("RezAgent.NtfyTokenParameter is unset and RezAgent.NtfyTopic (its value not repeated here) is no protection: a topic name is committed in infra/config, copied into the template and left in the processor's environment, so an unguessable topic is a secret in plain text: %s", tokenFix)
	}
	return out
}

// placeholderURL reports a URL whose host is a placeholder.
func placeholderURL(raw string) bool {
	u, err := url.Parse(raw)
	return err != nil || placeholderHost(u.Hostname())
}

// placeholderHost reports the names RFC 2606 and RFC 6761 reserve for
// examples and tests (example.com, *.example, *.test, *.invalid,
// localhost): nothing real answers there.
func placeholderHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, d := range []string{"example.com", "example.net", "example.org", "example", "test", "invalid", "localhost"} {
		if host == d || strings.HasSuffix(host, "."+d) {
			return true
		}
	}
	return host == ""
}
