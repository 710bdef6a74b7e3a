-- Why an app runs fewer instances than it wants, as the leader last placed it (e.g. "waiting
-- for capacity: tenant share used (…)"); null while every instance is placed. Written by the
-- scheduler with its placement, shown by `GET …/scale`.
alter table app_scale add column waiting text;
