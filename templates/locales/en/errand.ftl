# errand's words to people: notifications (the feed, Web Push), emails and
# the pages its links open. English is the reference: every other catalogue
# has exactly its messages (`cargo test` checks). Variables are given by
# errand; a translation may use fewer of them, never others.
#
# Dates: a strftime pattern (chrono's), month and day names in the language.

format-date-time = %-d %B %Y, %H:%M %Z
format-date = %-d %B %Y

size-bytes = { $count ->
    [one] { $n } byte
   *[other] { $n } bytes
}
size-kb = { $n } kB
size-mb = { $n } MB
size-gb = { $n } GB
size-tb = { $n } TB

no-reason = no reason was recorded

## A job's end: the feed's and a push's title, an email's subject, a digest's line.

job-ready = Your { $name } is ready
job-failed = Your { $name } failed
job-cancelled = Your { $name } was cancelled
job-replaced = Your { $name } was replaced

## The in-app feed

feed-job-ready = Your { $name } finished successfully.
feed-job-failed = Your { $name } failed: { $reason }
feed-job-cancelled-by-you = You cancelled your { $name }.
feed-job-cancelled-by-operator = An operator cancelled your { $name }.
feed-job-replaced = A newer request for your { $name } replaced this one.
feed-made-by-schedule = { $body } One of your schedules made it.
batch-done = { $total ->
    [one] Your batch of { $total } { $name } job is done
   *[other] Your batch of { $total } { $name } jobs is done
}
batch-outcome = { $completed } completed{ $failed ->
    [0] {""}
   *[other] , { $failed } failed
}{ $cancelled ->
    [0] {""}
   *[other] , { $cancelled } cancelled
}
feed-batch = { $outcome }.
feed-batch-with-report = { $outcome }; the report lists the others.
feed-webhook-disabled-title = A webhook endpoint was disabled
feed-webhook-disabled = Deliveries to { $url } stopped: { $reason }.
feed-schedule-paused-title = Your { $name } schedule was paused
feed-schedule-paused = You had not signed in since { $since }, so it stopped making jobs. Resume it if you still need it.
feed-schedule-paused-long-ago = You had not signed in for a long time, so it stopped making jobs. Resume it if you still need it.

## Web Push

push-open-result = Open it to see the result.

## Emails

email-hello = Hello,
email-what-went-wrong = What went wrong: { $reason }
email-cancelled = An operator cancelled it: it will not run.
email-cancelled-text = An operator cancelled your { $name }: it will not run.
email-what-you-asked = What you asked for:
email-size = Size
email-file = File
email-rows = { $count ->
    [one] { $rows } row
   *[other] { $rows } rows
}
email-see-details = See the details
email-download = Download
email-download-it = Download it
email-see-job = See the job
email-link-until = No sign-in needed: the link works until { $date }.
email-link-until-text = { $action } (no sign-in needed; the link works until { $date }):
email-sent-for-schedule = Sent by { $sender } because your schedule { $schedule } made this job.
email-pause-schedule = Pause the schedule
email-sent-for-job = Sent by { $sender } because you started this job.
email-stop = Stop emails like this one
email-schedule-text = Your schedule { $schedule } made this job. Pause it: { $link }
email-stop-text = Stop emails like this one: { $link }
email-batch-report = The batch's report lists the jobs that did not complete, with why.
email-batch-report-text = The batch's report (GET /batches/{ $batch }/report) lists the jobs that did not complete, with why.
email-sent-for-batch = Sent by { $sender } because you started this batch.

## A digest

digest-title = { $count ->
    [one] 1 job finished since your last digest
   *[other] { $count } jobs finished since your last digest
}
digest-intro-text = { $count ->
    [one] One job finished since your last digest, and you have not opened it yet:
   *[other] { $count } jobs finished since your last digest, and you have not opened them yet:
}
digest-failed = Your { $name } failed: { $reason }
digest-until = (until { $date })
digest-link-until-text = { $action } (the link works until { $date }):
digest-footer = No sign-in is needed for these links. Sent by { $sender } because you chose to read these notifications as a digest; change that in your notification preferences.
digest-footer-text = No sign-in is needed for these links. You chose to read these notifications as a digest; change that in your notification preferences.

## The pages of links (a job's link, unsubscribe, a schedule's pause)

page-link-invalid = This link is not valid
page-link-invalid-why = It may have been changed or cut short. Open the link from the email again, or ask the person who sent it.
page-link-expired = This link has expired
page-link-expired-why = Its result is no longer kept. Run the job again to get a fresh one.
page-job-gone = This job is no longer kept
page-job-gone-why = Its history was removed at the end of its retention.
page-file-gone = Your { $name } is no longer available
page-file-gone-why = Its file was deleted at the end of its retention. Run the job again to get a fresh one.
page-job-done = Your { $name } is done
page-job-done-why = It finished successfully.
page-job-cancelled-why = It will not run.
page-job-running-again = Your { $name } is running again
page-job-running-again-why = Its result will follow in a new email.
page-schedule-paused = This schedule is paused
page-schedule-paused-why = Your schedule { $when } makes no jobs until resumed.
page-pause-schedule = Pause this schedule?
page-pause-schedule-why = Your { $name } schedule { $when } will make no more jobs until you resume it.
page-pause = Pause
page-schedule-now-paused = Your schedule is paused
page-schedule-now-paused-why = It makes no jobs until you resume it: { $when }.
page-schedule-gone = This schedule no longer exists
page-schedule-gone-why = It was deleted: it makes no more jobs.
page-unsubscribe-ask = Stop emails about { $category }?
page-unsubscribe-ask-why = You will no longer get an email when a job of the category { $category } ends. It still shows in the app.
page-unsubscribe = Unsubscribe
page-unsubscribed = You are unsubscribed
page-unsubscribed-why = You will no longer get an email when a job of the category { $category } ends.
page-required = These emails cannot be turned off
page-required-why = Emails about { $category } are required.
page-choose-emails = Choose which emails you get
