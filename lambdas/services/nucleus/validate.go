package nucleus

import (
	"regexp"
	"strings"
	"sync"
	"time"

	// Schedules name IANA zones; the Lambda runtime image need not carry a
	// zoneinfo database, and validation must not depend on the host.
	_ "time/tzdata"

	"github.com/dynastack/dynastack/lambdas/platform/api"
	"github.com/dynastack/dynastack/lambdas/platform/cron"
)

var (
	accountIDPattern = regexp.MustCompile(`^[0-9]{12}$`)
	// IAM role ARN: partition, no region, 12-digit account, optional path,
	// role name of 1-64 characters from IAM's set.
	// Compiled on first use, as resourcePatterns: counted repetitions
	// ({1,64}, {1,255}) expand into large programs, and compiling them at
	// init cost every cold start about 1.5 ms (docs/functions.md, "Cold
	// start"), the executor's too, which never validates a role ARN.
	roleARNPattern = lazyRegexp(`^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b|aws-iso-e|aws-iso-f|aws-eusc):iam::([0-9]{12}):role/(?:[\x21-\x7e]*/)?([\w+=,.@-]{1,64})$`)
	regionPattern  = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}$`)
	// resourceARNPattern splits an ARN: partition, service, region,
	// account, resource.
	resourceARNPattern = regexp.MustCompile(`^arn:(aws|aws-cn|aws-us-gov|aws-iso|aws-iso-b|aws-iso-e|aws-iso-f|aws-eusc):([a-z0-9-]+):([a-z0-9-]*):([0-9]*):(.+)$`)
	// What a schedule can start and stop, per resource type.
	resourcePatterns = map[ResourceType]func() *regexp.Regexp{
		ResourceEC2: lazyRegexp(`^instance/i-[0-9a-f]{8}(?:[0-9a-f]{9})?$`),
		ResourceECS: lazyRegexp(`^service/(?:[A-Za-z0-9_-]{1,255}/)?[A-Za-z0-9_-]{1,255}$`),
		ResourceRDS: lazyRegexp(`^(?:db|cluster):[a-z](?:[a-z0-9]|-[a-z0-9]){0,62}$`),
	}
)

// lazyRegexp compiles expr once, on first use.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// ValidAccountID reports whether id is a 12-digit AWS account id.
func ValidAccountID(id string) bool { return accountIDPattern.MatchString(id) }

// validScheduleID reports whether id is a canonical lower-case UUID, the
// only form the service generates.
func validScheduleID(id string) bool { return api.CanonicalUUID(id) }

// checkName checks a display name: it is an index sort key, so it is
// bounded in bytes too, and surrounding blanks would sort it apart from its
// look-alike.
func checkName(v *api.Validator, field, s string) {
	if t := strings.TrimSpace(s); t != "" && t != s {
		v.Add(field, "must not start or end with whitespace")
		return
	}
	v.Text(field, s, 1, MaxNameChars)
	v.MaxBytes(field, s, MaxNameBytes)
}

// checkRoleARN checks an IAM role ARN in account accountID.
func checkRoleARN(v *api.Validator, field, arn, accountID string) {
	if arn == "" {
		v.Add(field, "is required")
		return
	}
	m := roleARNPattern().FindStringSubmatch(arn)
	switch {
	case len(arn) > MaxRoleARNBytes || m == nil:
		v.Add(field, "must be an IAM role ARN such as arn:aws:iam::123456789012:role/NucleusRole")
	case accountID != "" && m[2] != accountID:
		v.Add(field, "must be a role in account %s (the role the platform assumes in that account), not %s", accountID, m[2])
	}
}

// externalIDPattern is STS's constraint on ExternalId (2-1,224
// characters).
var externalIDPattern = regexp.MustCompile(`^[\w+=,.@:/-]+$`)

// MaxExternalIDChars is STS's limit on ExternalId.
const MaxExternalIDChars = 1224

// checkExternalID checks an external id as STS AssumeRole will: a value
// it refuses would fail every execution in the account.
func checkExternalID(v *api.Validator, field, id string) {
	if len(id) < 2 || len(id) > MaxExternalIDChars || !externalIDPattern.MatchString(id) {
		v.Add(field, "must be 2 to %d characters of letters, digits and +=,.@:/_- (STS AssumeRole's ExternalId)", MaxExternalIDChars)
	}
}

func checkRegion(v *api.Validator, field, region string) {
	switch {
	case region == "":
		v.Add(field, "is required")
	case len(region) > 32 || !regionPattern.MatchString(region):
		v.Add(field, "must be an AWS region such as us-east-1")
	}
}

func checkAccountID(v *api.Validator, field, id string) {
	switch {
	case id == "":
		v.Add(field, "is required")
	case !ValidAccountID(id):
		v.Add(field, "must be a 12-digit AWS account id")
	}
}

// checkResource checks a resource ARN against its type, region and
// account: the scheduler acts on the ARN, so the three stored attributes
// must say the same thing.
func checkResource(v *api.Validator, in NewResource) {
	valid := true
	if in.ResourceType == "" {
		v.Add("resource_type", "is required; one of %s", joinResourceTypes())
		valid = false
	} else if _, ok := resourcePatterns[in.ResourceType]; !ok {
		v.Add("resource_type", "must be one of %s", joinResourceTypes())
		valid = false
	}
	checkRegion(v, "region", in.Region)
	checkAccountID(v, "account_id", in.AccountID)
	if in.ResourceARN == "" {
		v.Add("resource_arn", "is required")
		return
	}
	m := resourceARNPattern.FindStringSubmatch(in.ResourceARN)
	if len(in.ResourceARN) > MaxResourceARNBytes || m == nil {
		v.Add("resource_arn", "must be an ARN (arn:partition:service:region:account:resource) of at most %d bytes", MaxResourceARNBytes)
		return
	}
	service, region, account, resource := m[2], m[3], m[4], m[5]
	if !valid {
		return
	}
	switch {
	case service != string(in.ResourceType):
		v.Add("resource_arn", "is an ARN of service %q, but resource_type is %s", service, in.ResourceType)
	case !resourcePatterns[in.ResourceType]().MatchString(resource):
		v.Add("resource_arn", "must name %s", resourceShapes[in.ResourceType])
	case region != in.Region:
		v.Add("resource_arn", "is in region %q, but region is %q", region, in.Region)
	case account != in.AccountID:
		v.Add("resource_arn", "is in account %q, but account_id is %q", account, in.AccountID)
	}
}

var resourceShapes = map[ResourceType]string{
	ResourceEC2: "an EC2 instance (…:instance/i-0123456789abcdef0)",
	ResourceECS: "an ECS service (…:service/<cluster>/<service>)",
	ResourceRDS: "an RDS instance or cluster (…:db:<id> or …:cluster:<id>)",
}

func joinResourceTypes() string {
	s := make([]string, len(ResourceTypes))
	for i, t := range ResourceTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// checkTimezone accepts IANA zone names. "" and "Local" load without error
// but mean UTC and the host's zone: neither is what a user meant.
func checkTimezone(v *api.Validator, field, tz string) {
	if tz == "" {
		v.Add(field, "is required")
		return
	}
	if _, err := time.LoadLocation(tz); err != nil || tz == "Local" || len(tz) > 64 {
		v.Add(field, "must be an IANA time zone such as Europe/Berlin or UTC")
	}
}

// checkCron checks a cron expression: 5 fields (minute hour day-of-month
// month day-of-week, as crontab) or 6 (the same plus year, as EventBridge
// Scheduler's cron()). It checks syntax and ranges, not that the
// expression ever fires.
func checkCron(v *api.Validator, field, expr string) {
	if strings.TrimSpace(expr) == "" {
		v.Add(field, "is required")
		return
	}
	if len(expr) > MaxCronChars {
		v.Add(field, "must be at most %d characters", MaxCronChars)
		return
	}
	if _, err := cron.Parse(expr); err != nil {
		v.Add(field, "invalid cron expression: %v", err)
	}
}
