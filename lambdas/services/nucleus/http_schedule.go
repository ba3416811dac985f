package nucleus

import (
	"net/http"

	"github.com/dynastack/dynastack/constructs/nucleus/contract"
	"github.com/dynastack/dynastack/lambdas/platform/api"
)

type createScheduleRequest struct {
	ScheduleName string `json:"schedule_name"`
	StartCron    string `json:"start_cron"`
	EndCron      string `json:"end_cron"`
	Timezone     string `json:"timezone"`
	Enabled      *bool  `json:"enabled"`
}

func (h *handler) createSchedule(w http.ResponseWriter, r *http.Request) error {
	var in createScheduleRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	var v api.Validator
	u := user(&v, r)
	checkName(&v, "schedule_name", in.ScheduleName)
	checkCron(&v, "start_cron", in.StartCron)
	checkCron(&v, "end_cron", in.EndCron)
	if in.StartCron != "" && in.StartCron == in.EndCron {
		v.Add("end_cron", "must differ from start_cron")
	}
	checkTimezone(&v, "timezone", in.Timezone)
	// Required, not defaulted: an enabled schedule stops real resources,
	// so the caller must say so.
	if in.Enabled == nil {
		v.Add("enabled", "is required (true or false)")
	}
	if err := v.Err(); err != nil {
		return err
	}
	sc, err := h.store.CreateSchedule(r.Context(), u, NewSchedule{ScheduleName: in.ScheduleName, StartCron: in.StartCron,
		EndCron: in.EndCron, Timezone: in.Timezone, Enabled: *in.Enabled})
	if err != nil {
		return err
	}
	w.Header().Set("Location", api.Location(contract.GetSchedule, sc.ScheduleID))
	api.WriteJSON(w, http.StatusCreated, sc)
	return nil
}

func (h *handler) getSchedule(w http.ResponseWriter, r *http.Request) error {
	return pageUnder(w, r, pathScheduleID, h.store.Schedule)
}

type updateScheduleRequest struct {
	ScheduleName api.Optional[string] `json:"schedule_name"`
	StartCron    api.Optional[string] `json:"start_cron"`
	EndCron      api.Optional[string] `json:"end_cron"`
	Timezone     api.Optional[string] `json:"timezone"`
	Enabled      api.Optional[bool]   `json:"enabled"`
}

func (h *handler) updateSchedule(w http.ResponseWriter, r *http.Request) error {
	id, err := pathScheduleID(r)
	if err != nil {
		return err
	}
	var in updateScheduleRequest
	if err := api.DecodeJSON(w, r, maxRequestBodyBytes, &in); err != nil {
		return err
	}
	if !in.ScheduleName.Set && !in.StartCron.Set && !in.EndCron.Set && !in.Timezone.Set && !in.Enabled.Set {
		return api.BadRequest("nothing to change; give at least one of schedule_name, start_cron, end_cron, timezone, enabled")
	}
	var v api.Validator
	u := user(&v, r)
	p := SchedulePatch{
		ScheduleName: in.ScheduleName.Ptr(&v, "schedule_name"),
		StartCron:    in.StartCron.Ptr(&v, "start_cron"),
		EndCron:      in.EndCron.Ptr(&v, "end_cron"),
		Timezone:     in.Timezone.Ptr(&v, "timezone"),
		Enabled:      in.Enabled.Ptr(&v, "enabled"),
	}
	if p.ScheduleName != nil {
		checkName(&v, "schedule_name", *p.ScheduleName)
	}
	if p.StartCron != nil {
		checkCron(&v, "start_cron", *p.StartCron)
	}
	if p.EndCron != nil {
		checkCron(&v, "end_cron", *p.EndCron)
	}
	if p.Timezone != nil {
		checkTimezone(&v, "timezone", *p.Timezone)
	}
	if err := v.Err(); err != nil {
		return err
	}
	sc, err := h.store.UpdateSchedule(r.Context(), u, id, p)
	return api.Reply(w, http.StatusOK, sc, api.About(err, id))
}

func (h *handler) listSchedules(w http.ResponseWriter, r *http.Request) error {
	var v api.Validator
	q := api.QueryOf(r)
	n := api.PageLimit(&v, q, 0, MaxPageSize)
	if err := v.Err(); err != nil {
		return err
	}
	page, err := h.store.Schedules(r.Context(), q.Cursor(), n)
	return api.Reply(w, http.StatusOK, page, api.CursorHint(err, cursorHint))
}

func (h *handler) deleteSchedule(w http.ResponseWriter, r *http.Request) error {
	return h.remove(w, r, pathScheduleID, h.store.DeleteSchedule)
}
