// Package agents is the agent catalogue: it reads agent and skill files from the search path
// and answers who an agent is, which agent holds a role, and which agent is the default.
//
// An agent is a markdown file with YAML frontmatter (id, handle, name, tools, roles, skills,
// language, turn_budget, idle_rollover, default); its body is the persona. A skill is a
// markdown file too, knowledge and procedure only: a skill file with a tools or tier key fails
// the load, because a skill never grants a tool or lowers a tier. There is no agents table: the
// files are the record, so a tools: grant is reviewable in a diff.
//
// The search path has two halves, loaded examples first:
//
//   - the examples the repository ships (examples/agents and examples/skills, read from a
//     clone or from the copy embedded in the binary, package buddi/examples);
//   - the owner's half: BUDDI_AGENTS_DIR if set, else <data>/agents, and BUDDI_SKILLS_DIR if
//     set, else <data>/skills (see [OwnerDirs], the one place that reads the environment).
//
// The owner's half wins: an agent or shared skill with the same id (name) as an example
// replaces it whole, never merged. A default: true in the owner's half beats one in the
// examples; two in one directory are a load error, as are two agents with one id or one
// handle. Every problem found is reported at once in a [LoadError], each with its file, so the
// owner fixes them all in one pass. A [Catalog] is immutable once loaded and safe for
// concurrent use; a change on disk is a new [Load].
//
// Skills: shared skills (skills/*.md) load for every agent unless they carry an agents: list,
// in which case they load for the agents it names (by id or handle); an agent also gets any
// shared skill its own skills: list names, and an unknown name fails the load. Private skills
// (agents/<id>/skills/*.md, beside the agent's file in the same half) always load for that
// agent and shadow a shared skill of the same name.
//
// Roles: [Catalog.ForRole] answers with the first claimant in declaration order, which is the
// owner's agent files and then the examples', each in file-name order, so an owner's agent
// takes a role from an example without editing it, as an owner's default does.
package agents
