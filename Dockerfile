# The Ringside app image: docker compose up (see docker-compose.yml and the README).
FROM python:3.11-slim

# pg_dump/pg_restore for `ringside db backup|restore`; Node only at build time for htmx and
# Swagger UI.
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-client nodejs npm \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /srv/ringside
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts \
 && mkdir -p static/vendor/swagger-ui \
 && cp node_modules/htmx.org/dist/htmx.min.js static/vendor/htmx.min.js \
 && cp node_modules/swagger-ui-dist/swagger-ui-bundle.js node_modules/swagger-ui-dist/swagger-ui.css \
       node_modules/swagger-ui-dist/LICENSE static/vendor/swagger-ui/ \
 && rm -rf node_modules

COPY pyproject.toml README.md ./
COPY app ./app
RUN pip install --no-cache-dir .
COPY migrations ./migrations
COPY question_bank ./question_bank
COPY templates ./templates
COPY static ./static

# The app finds its templates, migrations and bank next to its code (app/config.py ROOT):
# import it from here, not from the copy pip put in site-packages.
ENV PYTHONPATH=/srv/ringside
RUN useradd --system --uid 10001 ringside
USER ringside
ENV RINGSIDE_ENV=production
EXPOSE 8000
# Wait for the database, migrate, load the bank (unchanged questions are skipped), serve.
CMD ["sh", "-c", "ringside db wait --timeout 60 && ringside db upgrade && ringside bank load && exec ringside serve --host 0.0.0.0 --port 8000 --workers ${RINGSIDE_WORKERS:-4} --forwarded-allow-ips ${RINGSIDE_FORWARDED_ALLOW_IPS:-127.0.0.1}"]
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/readyz', timeout=2).status != 200)"
