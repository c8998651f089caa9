FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    DEBUG=False \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# The pinned runtime set first (hashes checked), so a code change reuses this layer.
COPY requirements/serve.txt ./requirements/serve.txt
RUN pip install --require-hashes -r requirements/serve.txt

COPY pyproject.toml README.md ./
COPY manage.py ./
COPY patience_site ./patience_site
COPY accounts ./accounts
COPY core ./core
COPY games ./games
COPY api ./api
COPY web ./web
COPY locale ./locale
RUN pip install --no-deps .

# collectstatic needs settings that load outside DEBUG; these values are build-time only.
RUN DEBUG=False SECRET_KEY=build-only-not-secret DAILY_SECRET=build-only \
    python manage.py collectstatic --noinput

RUN useradd --create-home --uid 1000 patience
USER patience

EXPOSE 8000
# Migrations run once, separately (see the `migrate` service in docker-compose.yml).
# HTTP by default; docker-compose.yml runs daphne for /ws/ from the same image.
CMD ["gunicorn", "patience_site.wsgi:application", "--bind", "0.0.0.0:8000", \
     "--worker-class", "gthread", "--workers", "2", "--threads", "8"]
