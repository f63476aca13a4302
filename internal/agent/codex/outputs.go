package codex

import "github.com/ccbridge/ccbridge/internal/agent"

// outputsArgs let the session's Codex send files to the chat as Claude
// does: it is told where to save them and how to name them
// (developer_instructions, given to the model as a developer message),
// and its sandbox may write that one folder beside its workspace.
// Codex's workspace-write sandbox refuses writes elsewhere ("Read-only
// file system"); --add-dir adds the folder to this process's writable
// roots and leaves the user's own (sandbox_workspace_write.writable_roots
// in their config) as they are, where a -c override of that key would
// replace them. Both verified on 0.171.0. A user's own
// developer_instructions are replaced for ccbridge's panes.
func outputsArgs(s agent.Spec) []string {
	var argv []string
	if s.Outputs != "" {
		argv = append(argv, "--add-dir", s.Outputs)
	}
	if s.SystemPrompt != "" {
		argv = append(argv, "-c", "developer_instructions="+tomlString(s.SystemPrompt))
	}
	return argv
}
