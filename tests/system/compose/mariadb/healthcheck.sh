#!/bin/bash
# Stand-in for the official image's healthcheck.sh: healthy once the real server (not the
# initialising one) answers on its socket with InnoDB up. The options are accepted and ignored.
mariadb -uroot -N -e "SELECT 1 FROM information_schema.ENGINES WHERE ENGINE = 'InnoDB'
                      AND SUPPORT IN ('YES', 'DEFAULT')" 2>/dev/null | grep -q 1
