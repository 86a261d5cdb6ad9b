package permission

// Mode is an execution mode. The modes are ordered plan < accept-edits < auto, and a
// decision never loosens as the mode falls.
type Mode string

// The execution modes.
const (
	// ModePlan allows reads, and network reads unless network_in_plan_mode is false.
	// It blocks everything else.
	ModePlan Mode = "plan"
	// ModeAcceptEdits also allows state changes, the edit tools inside the workspace and
	// the shell commands in permissions.allow; it asks before anything else.
	ModeAcceptEdits Mode = "accept-edits"
	// ModeAuto allows every call that the deny rules, the network policy and the
	// workspace boundary do not block.
	ModeAuto Mode = "auto"
)

// Valid reports whether m is one of the three permission modes. A harness may put another
// value in an agent's executionMode (for example "interactive"); the engine decides such
// an agent as plan.
func (m Mode) Valid() bool {
	return m == ModePlan || m == ModeAcceptEdits || m == ModeAuto
}

// Rank gives a mode's place in the order: plan 0, accept-edits 1, auto 2. An unknown
// mode ranks as plan, the strictest (the seed's rank_of/1).
func Rank(m Mode) int {
	switch m {
	case ModeAcceptEdits:
		return 1
	case ModeAuto:
		return 2
	default:
		return 0
	}
}

// lower returns the stricter of two modes, reading an unknown one as plan.
func lower(a, b Mode) Mode {
	if Rank(a) <= Rank(b) {
		return known(a)
	}
	return known(b)
}

// known returns m, or plan when m is not a permission mode.
func known(m Mode) Mode {
	if m.Valid() {
		return m
	}
	return ModePlan
}

// ClampMode lowers a.ExecutionMode to the harness ceiling a.MaxExecutionMode (the seed's
// clamp_mode/1). An agent without a ceiling, or with a mode at or below it, is returned as
// it is; a ceiling that is not a permission mode lowers to plan.
func ClampMode(a Agent) Agent {
	if a.MaxExecutionMode == "" || Rank(a.ExecutionMode) <= Rank(a.MaxExecutionMode) {
		return a
	}
	a.ExecutionMode = known(a.MaxExecutionMode)
	return a
}

// effectiveMode is the mode the engine decides with: the clamped mode, with anything
// that is not a permission mode read as plan.
func effectiveMode(a Agent) Mode {
	return known(ClampMode(a).ExecutionMode)
}
