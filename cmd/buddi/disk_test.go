package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"buddi/doctor"
	"buddi/health"
	"buddi/internal/tmpfs"
)

// A buddi whose home is on a disk that fills up says so: a nearly full disk is a warning,
// a full one makes /api/health answer 503 with the disk named among its problems and fails
// buddi doctor's disk check, and both are well again once there is room.
func TestFullDiskIsReportedByHealthAndDoctor(t *testing.T) {
	t.Parallel()
	disk := tmpfs.Mount(t, 512<<20)
	_, port, vars := env(t)
	home := filepath.Join(disk, "home")
	for i, kv := range vars {
		if strings.HasPrefix(kv, "BUDDI_HOME=") {
			vars[i] = "BUDDI_HOME=" + home
		}
	}
	s := startServe(t, home, port, vars)
	// Under a GiB free: nearly full, a warning that leaves the report ok (and the code 200).
	nearlyFull := func(rep health.Report) {
		t.Helper()
		if rep.Disk == nil || rep.Disk.State != health.DiskLow || rep.Disk.Path != home ||
			len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "is nearly full") {
			t.Fatalf("health's disk with some room: %+v, warnings %q", rep.Disk, rep.Warnings)
		}
	}
	nearlyFull(s.health())

	tmpfs.Fill(t, disk, 8<<20)
	resp, err := s.get("/api/health")
	if err != nil {
		t.Fatal(err)
	}
	var rep health.Report
	err = json.NewDecoder(resp.Body).Decode(&rep)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || rep.Status != "degraded" || rep.Disk == nil || rep.Disk.State != health.DiskFull {
		t.Fatalf("health on a full disk: %d %s, disk %+v", resp.StatusCode, rep.Status, rep.Disk)
	}
	if !strings.Contains(strings.Join(rep.Problems, "\n"), "the disk that holds "+home+" is full") {
		t.Errorf("health's problems on a full disk: %q", rep.Problems)
	}

	code, out, errOut := runBuddi(t, vars, time.Minute, "doctor", "--json")
	var dr doctor.Report
	if err := json.Unmarshal([]byte(out), &dr); err != nil {
		t.Fatalf("doctor --json (%d): %v\n%s%s", code, err, out, errOut)
	}
	var disk1 *doctor.Check
	for i := range dr.Checks {
		if dr.Checks[i].Name == "disk" {
			disk1 = &dr.Checks[i]
		}
	}
	if code != doctor.ExitProblem || disk1 == nil || disk1.Status != doctor.Fail || !strings.Contains(disk1.Sentence, "is full") || disk1.Fix == "" {
		t.Fatalf("doctor on a full disk: exit %d, disk check %+v", code, disk1)
	}
	if dr.Serving == nil || dr.Serving.Status != "degraded" {
		t.Errorf("doctor did not read the degraded buddi's report: %+v", dr.Serving)
	}

	// The dashboard's Health page reads the 503's report and lists the full disk.
	p := openPage(t, s)
	var link struct{ URL string }
	if code, out, errOut := runBuddi(t, vars, time.Minute, "dashboard", "--json"); code != 0 || json.Unmarshal([]byte(out), &link) != nil {
		t.Fatalf("buddi dashboard: %d %s%s", code, out, errOut)
	}
	p.navigate(link.URL)
	p.goTo("#/health")
	p.poll("the full disk on the Health page", `document.querySelector('main').innerText.includes('Something needs a look') && document.querySelector('main ul.problems').innerText.includes('is full')`)
	p.shootBoth("health-disk-full") // the problem's long sentence fits at 1280 and at 390 px

	if err := os.Remove(filepath.Join(disk, "filler")); err != nil {
		t.Fatal(err)
	}
	nearlyFull(s.health()) // polls until ok, and a 200 with it
}
