# Les mots d'errand, en français : notifications (le fil, Web Push), e-mails
# et pages de ses liens. Mêmes messages que le catalogue anglais (vérifié
# par `cargo test`) ; mêmes variables, ou moins.

format-date-time = %-d %B %Y, %H:%M %Z
format-date = %-d %B %Y

size-bytes = { $count ->
    [one] { $n } octet
   *[other] { $n } octets
}
size-kb = { $n } ko
size-mb = { $n } Mo
size-gb = { $n } Go
size-tb = { $n } To

no-reason = aucune raison n'a été enregistrée

## La fin d'une tâche

job-ready = Votre { $name } est prêt
job-failed = Votre { $name } a échoué
job-cancelled = Votre { $name } a été annulé
job-replaced = Votre { $name } a été remplacé

## Le fil de notifications

feed-job-ready = Votre { $name } s'est terminé avec succès.
feed-job-failed = Votre { $name } a échoué : { $reason }
feed-job-cancelled-by-you = Vous avez annulé votre { $name }.
feed-job-cancelled-by-operator = Un opérateur a annulé votre { $name }.
feed-job-replaced = Une demande plus récente de { $name } a remplacé celle-ci.
feed-made-by-schedule = { $body } L'une de vos planifications l'a lancé.
batch-done = { $total ->
    [one] Votre lot de { $total } tâche { $name } est terminé
   *[other] Votre lot de { $total } tâches { $name } est terminé
}
batch-outcome = { $completed ->
    [one] { $completed } terminée
   *[other] { $completed } terminées
}{ $failed ->
    [0] {""}
    [one] , { $failed } en échec
   *[other] , { $failed } en échec
}{ $cancelled ->
    [0] {""}
    [one] , { $cancelled } annulée
   *[other] , { $cancelled } annulées
}
feed-batch = { $outcome }.
feed-batch-with-report = { $outcome } ; le rapport liste les autres.
feed-webhook-disabled-title = Un point de terminaison de webhook a été désactivé
feed-webhook-disabled = Les envois vers { $url } sont arrêtés : { $reason }.
feed-schedule-paused-title = Votre planification de { $name } a été suspendue
feed-schedule-paused = Vous ne vous étiez pas connecté depuis le { $since } : elle ne lance plus de tâches. Reprenez-la si vous en avez encore besoin.
feed-schedule-paused-long-ago = Vous ne vous étiez pas connecté depuis longtemps : elle ne lance plus de tâches. Reprenez-la si vous en avez encore besoin.

## Web Push

push-open-result = Ouvrez-le pour voir le résultat.

## E-mails

email-hello = Bonjour,
email-what-went-wrong = Ce qui n'a pas marché : { $reason }
email-cancelled = Un opérateur l'a annulé : il ne sera pas exécuté.
email-cancelled-text = Un opérateur a annulé votre { $name } : il ne sera pas exécuté.
email-what-you-asked = Ce que vous avez demandé :
email-size = Taille
email-file = Fichier
email-rows = { $count ->
    [one] { $rows } ligne
   *[other] { $rows } lignes
}
email-see-details = Voir les détails
email-download = Télécharger
email-download-it = Téléchargez-le
email-see-job = Voir la tâche
email-link-until = Sans connexion : le lien fonctionne jusqu'au { $date }.
email-link-until-text = { $action } (sans connexion ; le lien fonctionne jusqu'au { $date }) :
email-sent-for-schedule = Envoyé par { $sender } parce que votre planification { $schedule } a lancé cette tâche.
email-pause-schedule = Suspendre la planification
email-sent-for-job = Envoyé par { $sender } parce que vous avez lancé cette tâche.
email-stop = Ne plus recevoir ces e-mails
email-schedule-text = Votre planification { $schedule } a lancé cette tâche. Pour la suspendre : { $link }
email-stop-text = Ne plus recevoir ces e-mails : { $link }
email-batch-report = Le rapport du lot liste les tâches qui n'ont pas abouti, avec la raison.
email-batch-report-text = Le rapport du lot (GET /batches/{ $batch }/report) liste les tâches qui n'ont pas abouti, avec la raison.
email-sent-for-batch = Envoyé par { $sender } parce que vous avez lancé ce lot.

## Le résumé

digest-title = { $count ->
    [one] 1 tâche terminée depuis votre dernier résumé
   *[other] { $count } tâches terminées depuis votre dernier résumé
}
digest-intro-text = { $count ->
    [one] Une tâche s'est terminée depuis votre dernier résumé, et vous ne l'avez pas encore ouverte :
   *[other] { $count } tâches se sont terminées depuis votre dernier résumé, et vous ne les avez pas encore ouvertes :
}
digest-failed = Votre { $name } a échoué : { $reason }
digest-until = (jusqu'au { $date })
digest-link-until-text = { $action } (le lien fonctionne jusqu'au { $date }) :
digest-footer = Ces liens ne demandent pas de connexion. Envoyé par { $sender } parce que vous avez choisi de lire ces notifications dans un résumé ; modifiez ce choix dans vos préférences de notification.
digest-footer-text = Ces liens ne demandent pas de connexion. Vous avez choisi de lire ces notifications dans un résumé ; modifiez ce choix dans vos préférences de notification.

## Les pages des liens

page-link-invalid = Ce lien n'est pas valide
page-link-invalid-why = Il a peut-être été modifié ou tronqué. Ouvrez de nouveau le lien depuis l'e-mail, ou demandez-le à la personne qui l'a envoyé.
page-link-expired = Ce lien a expiré
page-link-expired-why = Son résultat n'est plus conservé. Relancez la tâche pour en obtenir un nouveau.
page-job-gone = Cette tâche n'est plus conservée
page-job-gone-why = Son historique a été supprimé à la fin de sa durée de conservation.
page-file-gone = Votre { $name } n'est plus disponible
page-file-gone-why = Son fichier a été supprimé à la fin de sa durée de conservation. Relancez la tâche pour en obtenir un nouveau.
page-job-done = Votre { $name } est terminé
page-job-done-why = Il s'est terminé avec succès.
page-job-cancelled-why = Il ne sera pas exécuté.
page-job-running-again = Votre { $name } est relancé
page-job-running-again-why = Son résultat suivra dans un nouvel e-mail.
page-schedule-paused = Cette planification est suspendue
page-schedule-paused-why = Votre planification { $when } ne lance aucune tâche jusqu'à sa reprise.
page-pause-schedule = Suspendre cette planification ?
page-pause-schedule-why = Votre planification de { $name } { $when } ne lancera plus de tâches jusqu'à ce que vous la repreniez.
page-pause = Suspendre
page-schedule-now-paused = Votre planification est suspendue
page-schedule-now-paused-why = Elle ne lance aucune tâche jusqu'à ce que vous la repreniez : { $when }.
page-schedule-gone = Cette planification n'existe plus
page-schedule-gone-why = Elle a été supprimée : elle ne lance plus de tâches.
page-unsubscribe-ask = Ne plus recevoir d'e-mails sur { $category } ?
page-unsubscribe-ask-why = Vous ne recevrez plus d'e-mail quand une tâche de la catégorie { $category } se termine. Elle reste visible dans l'application.
page-unsubscribe = Se désabonner
page-unsubscribed = Vous êtes désabonné
page-unsubscribed-why = Vous ne recevrez plus d'e-mail quand une tâche de la catégorie { $category } se termine.
page-required = Ces e-mails ne peuvent pas être désactivés
page-required-why = Les e-mails sur { $category } sont obligatoires.
page-choose-emails = Choisir les e-mails que vous recevez
