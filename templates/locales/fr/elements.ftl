### The words of errand's web components (assets/client/elements/: <errand-bell>,
### <errand-export-button>, <errand-schedule>, <errand-preferences>), in French.
### The browser reads them from GET /i18n/elements?locale=fr, where each { $name } becomes {name}.
### The same ids as templates/locales/en/elements.ftl, and no placeable English lacks.
### Only text and { $name } placeables: no selectors, terms, attributes or functions.
### Plurals: -one (0 and 1 in French) and -other.
### The spaces before : and %, and between a number and its unit, are no-break spaces (U+00A0).

## Shared by the elements

ui-download = Télécharger { $name }
ui-download-unnamed = Télécharger le fichier
ui-retry-busy = Occupé, nouvel essai dans { $seconds } s…
ui-retry-offline = Connexion perdue, nouvel essai dans { $seconds } s…

## <errand-bell>

ui-bell-label = Notifications
ui-bell-label-new = Notifications, { $new }
ui-bell-label-unread = Notifications, { $unread }
ui-bell-label-new-unread = Notifications, { $new }, { $unread }
ui-bell-new-one = { $count } nouvelle
ui-bell-new-other = { $count } nouvelles
ui-bell-unread-one = { $count } non lue
ui-bell-unread-other = { $count } non lues
ui-bell-heading = Notifications
ui-bell-mark-all-read = Tout marquer comme lu
ui-bell-archive-read = Archiver les lues
ui-bell-empty = Rien pour l’instant : les tâches terminées s’affichent ici.
ui-bell-push = M’avertir sur cet appareil
ui-bell-announce = Nouvelle notification : { $title }
ui-bell-entry-unread = Non lue :
ui-bell-mark-read = Marquer comme lue
ui-bell-mark-read-label = Marquer comme lue : { $title }
ui-bell-archive = Archiver
ui-bell-archive-label = Archiver : { $title }
ui-bell-file-expired = Le fichier a expiré
ui-bell-error-load = Impossible de charger les notifications : { $error }
ui-bell-error-mark-seen = Impossible de les marquer comme vues : { $error }
ui-bell-error-mark-read = Impossible de la marquer comme lue : { $error }
ui-bell-error-mark-all-read = Impossible de les marquer comme lues : { $error }
ui-bell-error-archive = Impossible de l’archiver : { $error }
ui-bell-error-archive-read = Impossible de les archiver : { $error }
ui-bell-error-push-on = Impossible d’activer les notifications sur cet appareil : { $error }
ui-bell-error-push-off = Impossible de les désactiver : { $error }

## <errand-export-button>

ui-export-button = Exporter
ui-export-starting = Démarrage…
ui-export-processing = Traitement en cours…
ui-export-processing-percent = Traitement en cours… { $percent } %
ui-export-processing-message = Traitement en cours… { $message }
ui-export-processing-done = Traitement en cours… { $done } traités
ui-export-paused = En pause.
ui-export-ready = Prêt.
ui-export-done = Terminé.
ui-export-file-expired = Le fichier a expiré.
ui-export-failed = Échec : { $reason }
ui-export-failed-no-reason = Échec : aucune raison n’a été donnée
ui-export-cancelled = Annulé.
ui-export-try-again = Réessayer
ui-export-again = Nouvel export

## <errand-schedule>

ui-schedule-open = Répéter…
ui-schedule-field-every = Fréquence
ui-schedule-every-day = Chaque jour
ui-schedule-every-week = Chaque semaine
ui-schedule-every-month = Chaque mois
ui-schedule-field-weekday = Jour de la semaine
ui-schedule-field-monthday = Jour du mois
ui-schedule-monthday-hint = De 1 à 28 : tous les mois l’ont
ui-schedule-field-time = Heure
ui-schedule-field-timezone = Fuseau horaire
ui-schedule-field-dates = Dates
ui-schedule-dates-hint = Les dates que chaque exécution exporte
ui-schedule-dates-form = Comme dans le formulaire
ui-schedule-dates-last-7-days = 7 derniers jours
ui-schedule-dates-previous-week = Semaine précédente
ui-schedule-dates-previous-month = Mois précédent
ui-schedule-range-last-7-days = 7 derniers jours
ui-schedule-range-previous-week = semaine précédente
ui-schedule-range-previous-month = mois précédent
ui-schedule-submit = Planifier
ui-schedule-scheduling = Planification…
ui-schedule-cancel = Annuler
ui-schedule-problem-field = { $field } : { $problem }
ui-schedule-error-load = Impossible de charger les planifications : { $error }
ui-schedule-heading = Planifications
ui-schedule-recurrence-day = Chaque jour à { $time } ({ $timezone })
ui-schedule-recurrence-week = Chaque semaine le { $weekday } à { $time } ({ $timezone })
ui-schedule-recurrence-month = Chaque mois le { $day } à { $time } ({ $timezone })
ui-schedule-recurrence-cron = { $cron } ({ $timezone })
ui-schedule-made = Planifié : { $when }
ui-schedule-deleted = Supprimé.
ui-schedule-next-run = prochaine exécution { $time }
ui-schedule-paused = en pause
ui-schedule-no-more-runs = plus aucune exécution
ui-schedule-pause = Suspendre
ui-schedule-resume = Reprendre
ui-schedule-delete = Supprimer

## <errand-preferences>

ui-preferences-caption = Préférences de notification
ui-preferences-category = Catégorie
ui-preferences-status = État
ui-preferences-channel-in-app = Dans l’application
ui-preferences-channel-email = E-mail
ui-preferences-channel-push = Push
ui-preferences-toggle = { $channel } pour { $category }
ui-preferences-toggle-required = { $channel } pour { $category } (obligatoire)
ui-preferences-required = obligatoire
ui-preferences-in-digest = dans le résumé
ui-preferences-loading = Chargement…
ui-preferences-error-load = Impossible de charger les préférences : { $error }
ui-preferences-retry = Réessayer
ui-preferences-none = Aucune tâche n’envoie de notifications.
ui-preferences-saving = Enregistrement…
ui-preferences-saved = Enregistré
