/* placeholder: <errand-schedule> */
