package mteb

import "testing"

// TestModelPrompt checks the order in which a prompt is chosen, as mteb's
// get_prompt_name chooses it: TASK-ROLE, TASK, TYPE-ROLE, TYPE, ROLE.
func TestModelPrompt(t *testing.T) {
	task := Task{Name: "SciFact", Type: "Retrieval"}
	m := Model{Prompts: map[string]string{"query": "q", "Retrieval": "r", "Retrieval-document": "rd", "SciFact-query": "sq"}}
	for _, tc := range []struct{ role, prompt, key string }{
		{RoleQuery, "sq", "SciFact-query"},
		{RoleDocument, "rd", "Retrieval-document"},
	} {
		p, k, ok := m.Prompt(task, tc.role)
		if !ok || p != tc.prompt || k != tc.key {
			t.Errorf("%s: %q under %q (%v), want %q under %q", tc.role, p, k, ok, tc.prompt, tc.key)
		}
	}
	if _, _, ok := (Model{Prompts: map[string]string{"STS": "s"}}).Prompt(task, RoleQuery); ok {
		t.Error("a prompt of another task type was taken")
	}
	if m, ok := LookupModel("intfloat/multilingual-e5-small"); !ok || m.Revision != "fd1525a9fd15316a2d503bf26ab031a61d056e98" {
		t.Errorf("multilingual-e5-small: %+v %v", m, ok)
	}
}
