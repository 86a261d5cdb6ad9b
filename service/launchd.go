package service

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strings"
)

// LaunchdPlist is the launch agent that runs s: buddi serve at login, started again when it
// exits with a failure, its output in the home's logs directory. launchd reads no environment
// file, so with one the agent runs buddi through sh, which reads it.
func LaunchdPlist(s Spec) (string, error) {
	if err := s.Validate(); err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- buddi as a launchd agent, written by buddi service install. It holds no secret. -->
<plist version="1.0">
<dict>
`)
	kv := func(k, v string) { fmt.Fprintf(&b, "\t<key>%s</key>\n\t<string>%s</string>\n", esc(k), esc(v)) }
	kv("Label", Label)
	b.WriteString("\t<key>ProgramArguments</key>\n\t<array>\n")
	args := []string{s.Binary, "serve"}
	if s.EnvFile != "" {
		args = []string{"/bin/sh", "-c", `set -a; . "$0"; exec "$1" serve`, s.EnvFile, s.Binary}
	}
	for _, a := range args {
		fmt.Fprintf(&b, "\t\t<string>%s</string>\n", esc(a))
	}
	b.WriteString("\t</array>\n\t<key>EnvironmentVariables</key>\n\t<dict>\n")
	for _, v := range s.vars() {
		fmt.Fprintf(&b, "\t\t<key>%s</key>\n\t\t<string>%s</string>\n", esc(v[0]), esc(v[1]))
	}
	b.WriteString("\t</dict>\n\t<key>RunAtLoad</key>\n\t<true/>\n")
	b.WriteString("\t<key>KeepAlive</key>\n\t<dict>\n\t\t<key>SuccessfulExit</key>\n\t\t<false/>\n\t</dict>\n")
	log := filepath.Join(s.Home, "logs", "service.log")
	kv("StandardOutPath", log)
	kv("StandardErrorPath", log)
	b.WriteString("</dict>\n</plist>\n")
	return b.String(), nil
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
