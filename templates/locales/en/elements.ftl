### The words of errand's web components (assets/client/elements/: <errand-bell>,
### <errand-export-button>, <errand-schedule>, <errand-preferences>), in English.
### The browser reads them from GET /i18n/elements, where each { $name } becomes {name}.
### Every id starts with ui-; templates/locales/fr/elements.ftl has the same ids.
### Only text and { $name } placeables: no selectors, terms, attributes or functions.
### A plural is one id per CLDR category (-one, -other, and -few, -many… where a
### language has them); the elements pick the form for the number, else -other.

## Shared by the elements

ui-download = Download { $name }
ui-download-unnamed = Download the file
ui-retry-busy = Busy, retrying in { $seconds } s…
ui-retry-offline = Connection lost, retrying in { $seconds } s…

## <errand-bell>

ui-bell-label = Notifications
ui-bell-label-new = Notifications, { $new }
ui-bell-label-unread = Notifications, { $unread }
ui-bell-label-new-unread = Notifications, { $new }, { $unread }
ui-bell-new-one = { $count } new
ui-bell-new-other = { $count } new
ui-bell-unread-one = { $count } unread
ui-bell-unread-other = { $count } unread
ui-bell-heading = Notifications
ui-bell-mark-all-read = Mark all read
ui-bell-archive-read = Archive read
ui-bell-empty = Nothing yet: finished jobs show up here.
ui-bell-push = Notify me on this device
ui-bell-announce = New notification: { $title }
ui-bell-entry-unread = Unread:
ui-bell-mark-read = Mark read
ui-bell-mark-read-label = Mark read: { $title }
ui-bell-archive = Archive
ui-bell-archive-label = Archive: { $title }
ui-bell-file-expired = The file has expired
ui-bell-error-load = Could not load notifications: { $error }
ui-bell-error-mark-seen = Could not mark them seen: { $error }
ui-bell-error-mark-read = Could not mark it read: { $error }
ui-bell-error-mark-all-read = Could not mark them read: { $error }
ui-bell-error-archive = Could not archive it: { $error }
ui-bell-error-archive-read = Could not archive them: { $error }
ui-bell-error-push-on = Could not turn on notifications on this device: { $error }
ui-bell-error-push-off = Could not turn them off: { $error }

## <errand-export-button>

ui-export-button = Export
ui-export-starting = Starting…
ui-export-processing = Processing…
ui-export-processing-percent = Processing… { $percent } %
ui-export-processing-message = Processing… { $message }
ui-export-processing-done = Processing… { $done } done
ui-export-paused = Paused.
ui-export-ready = Ready.
ui-export-done = Done.
ui-export-file-expired = The file has expired.
ui-export-failed = Failed: { $reason }
ui-export-failed-no-reason = Failed: no reason was given
ui-export-cancelled = Cancelled.
ui-export-try-again = Try again
ui-export-again = New export

## <errand-schedule>

ui-schedule-open = Repeat every…
ui-schedule-field-every = Repeat
ui-schedule-every-day = Every day
ui-schedule-every-week = Every week
ui-schedule-every-month = Every month
ui-schedule-field-weekday = Weekday
ui-schedule-field-monthday = Day of the month
ui-schedule-monthday-hint = 1 to 28: every month has it
ui-schedule-field-time = Time
ui-schedule-field-timezone = Time zone
ui-schedule-field-dates = Dates
ui-schedule-dates-hint = Which dates each run exports
ui-schedule-dates-form = As in the form
ui-schedule-dates-last-7-days = Last 7 days
ui-schedule-dates-previous-week = Previous week
ui-schedule-dates-previous-month = Previous month
ui-schedule-range-last-7-days = last 7 days
ui-schedule-range-previous-week = previous week
ui-schedule-range-previous-month = previous month
ui-schedule-submit = Schedule
ui-schedule-scheduling = Scheduling…
ui-schedule-cancel = Cancel
ui-schedule-problem-field = { $field }: { $problem }
ui-schedule-error-load = Could not load the schedules: { $error }
ui-schedule-heading = Schedules
ui-schedule-recurrence-day = Every day at { $time } ({ $timezone })
ui-schedule-recurrence-week = Every week on { $weekday } at { $time } ({ $timezone })
ui-schedule-recurrence-month = Every month on day { $day } at { $time } ({ $timezone })
ui-schedule-recurrence-cron = { $cron } ({ $timezone })
ui-schedule-made = Scheduled: { $when }
ui-schedule-deleted = Deleted.
ui-schedule-next-run = next run { $time }
ui-schedule-paused = paused
ui-schedule-no-more-runs = no further runs
ui-schedule-pause = Pause
ui-schedule-resume = Resume
ui-schedule-delete = Delete

## <errand-preferences>

ui-preferences-caption = Notification preferences
ui-preferences-category = Category
ui-preferences-status = Status
ui-preferences-channel-in-app = In app
ui-preferences-channel-email = Email
ui-preferences-channel-push = Push
ui-preferences-toggle = { $channel } for { $category }
ui-preferences-toggle-required = { $channel } for { $category } (required)
ui-preferences-required = required
ui-preferences-in-digest = in digest
ui-preferences-loading = Loading…
ui-preferences-error-load = Could not load the preferences: { $error }
ui-preferences-retry = Try again
ui-preferences-none = No job sends notifications.
ui-preferences-saving = Saving…
ui-preferences-saved = Saved
